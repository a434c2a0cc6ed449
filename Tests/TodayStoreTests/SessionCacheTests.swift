import Foundation
import Testing
import TodayHost
@testable import TodayStore

/// The cache of committed sessions never says anything the database would not.
@Suite struct SessionCacheTests {
    func temporaryStore() throws -> (SessionStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try SessionStore(path: directory.appendingPathComponent("s.sqlite").path), directory)
    }

    /// A few inputs of every kind, so the session is far from its defaults.
    let script: [Input] = [
        .gesture(.pull(requestId: "p1")),
        .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w1", "presentation": "header"]),
        .lifecycle(.tabActivated(requestId: "t1")),
        .webEvent(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "p1", "mode": "soft", "status": "failed"]),
        .clock(.advanceBy(700)),
        .webEvent(["type": "webView.navigationAction", "url": "today://chat/send?text=hi&msg_trigger_ele_id=wgt_1"]),
        .lifecycle(.background),
    ]

    @Test func cachedBytesEqualAFreshEncodingAndTheCachedSessionEqualsTheStoredOne() throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try store.create(id: "s1", config: SessionConfig(uid: "u1"))
        for input in script {
            let write = try store.apply(input, to: "s1")
            let answered = write.viewBytes
            let reloaded = try store.reloadFromDisk("s1")
            // The differential between the cached session and the one on disk is nil.
            #expect(try store.session("s1").session == reloaded.session)
            // What a read sends equals a fresh encoding of the stored state.
            #expect(try store.viewBytes("s1") == reloaded.session.viewBytes)
            #expect(answered == reloaded.session.viewBytes)
        }
    }

    /// A cached session keeps what its write read and wrote of the records the next input looks
    /// up first (issue 46: the next write then reads none of them), and that is what the rows
    /// hold: every such record, server-made ids (H4) and recovery reloads (H9) among them.
    @Test func theRecordsACachedSessionKeepsAreTheStoredOnes() throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try store.create(id: "s1", config: SessionConfig(uid: "u1"))
        let more: [Input] = [
            .gesture(.pull(requestId: nil)),
            .lifecycle(.tabActivated(requestId: nil)),
            .clock(.advanceBy(5000)),  // the soft deadline: a recovery reload with a server-made id
            .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w2", "presentation": "header"]),
            .clock(.advanceBy(12000)),
        ]
        var kept = 0
        for input in script + more {
            _ = try store.apply(input, to: "s1")
            let cached = try #require(store.cache.stored("s1"))
            let known = try #require(cached.knownLedger, "a write leaves what it read with the session it caches")
            let ids = cached.session.standingLookups()
            // The open requests are known; the next server-made id is, unless this input made
            // a request and moved the counter past the one it looked up.
            let open = Set(cached.session.standingLookups(mayMint: false))
            let stored = try store.recordsFromDisk("s1", requestIds: ids)
            for id in ids {
                switch known.lookup(id) {
                case let .found(record):
                    #expect(stored[id] == record, "\(id) after \(input)")
                    kept += 1
                case .absent: #expect(stored[id] == nil, "\(id) after \(input)")
                case .unknown: #expect(!open.contains(id), "\(id) after \(input): not kept")
                }
            }
        }
        #expect(kept > 3, "open requests were kept as records, not only as absent ids")
    }

    /// A view rendered for a write (`Write.viewBytes`) after its session was removed and a new
    /// one created under the same id, both at version 1, must not become the new one's.
    @Test func aLateViewOfARemovedSessionIsNotKeptForItsSuccessor() throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try store.create(id: "s1", config: SessionConfig(uid: "old-uid"))
        #expect(try store.purge(id: "s1"))
        _ = try store.create(id: "s1", config: SessionConfig(uid: "new-uid"))
        _ = first.viewBytes
        let view = try JSON.parse(bytes: try store.viewBytes("s1"))
        #expect(view["uid"] == "new-uid")
    }

    @Test func aFailedCommitLeavesCacheAndDatabaseUntouched() throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try store.create(id: "s1", config: SessionConfig(uid: "u1"))
        _ = try store.apply(.gesture(.pull(requestId: "p1")), to: "s1")
        let before = try store.session("s1").session
        let viewBefore = try store.viewBytes("s1")
        let timelineBefore = try store.timeline("s1", after: 0, limit: 1000, kind: nil).entries

        store.failNextCommit()
        #expect(throws: StoreError.self) { try store.apply(.lifecycle(.tabActivated(requestId: "t1")), to: "s1") }

        #expect(try store.session("s1").session == before)
        #expect(try store.viewBytes("s1") == viewBefore)
        #expect(try store.reloadFromDisk("s1").session == before)
        #expect(try store.timeline("s1", after: 0, limit: 1000, kind: nil).entries == timelineBefore)
        // The id the failed input named was never recorded: it is still free to use.
        let retried = try store.apply(.lifecycle(.tabActivated(requestId: "t1")), to: "s1")
        #expect(retried.stored.session.version == before.version + 1)
    }

    @Test func aBoundedCacheReloadsWhatItDropped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SessionStore(path: directory.appendingPathComponent("s.sqlite").path, cacheCapacity: 8)
        for index in 0..<40 {
            _ = try store.create(id: "s\(index)", config: SessionConfig(uid: "u\(index)"))
            _ = try store.apply(.lifecycle(.tabActivated(requestId: "t\(index)")), to: "s\(index)")
        }
        for index in 0..<40 {
            let session = try store.session("s\(index)").session
            #expect(session.version == 2)
            #expect(session.refresh.pending.map(\.requestId) == ["t\(index)"])
        }
    }
}

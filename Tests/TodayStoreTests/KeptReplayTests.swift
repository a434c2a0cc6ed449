import Foundation
import Testing
import TodayHost
import TodayTestSupport
@testable import TodayStore

/// Issue 21, item 3: a host trace's replay kept as a session (`POST /v1/host-traces?keep=`),
/// written a chunk at a time while hidden, shown whole at the end, or never shown at all.
@Suite struct KeptReplayTests {
    private func tempPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-kept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("s.sqlite").path
    }

    /// A replay of a pull Web never answers: 13 s on (H6, H9, H11), as a verifier would make it.
    private func replay(id: String) throws -> (HostSession, [TimelineEntry], InMemoryLedger) {
        var ledger = InMemoryLedger()
        let (start, created) = try HostSession.create(id: id, config: SessionConfig(uid: "u"))
        var session = start
        var entries = created.entries
        for input: Input in [.gesture(.pull(requestId: nil)), .clock(.advanceBy(13_000))] {
            let applied = try session.apply(input, ledger: ledger)
            ledger.apply(applied.ledgerWrites)
            entries += applied.entries
        }
        return (session, entries, ledger)
    }

    @Test func aKeptReplayAppearsWholeOnlyAtTheEnd() throws {
        let path = try tempPath()
        let store = try SessionStore(path: path, chunkRows: 3)
        let (final, entries, ledger) = try replay(id: "kept")
        let (first, _) = try HostSession.create(id: "kept", config: SessionConfig(uid: "u"))
        let kept = try store.keepReplay(first, as: "kept")
        try kept.append(Array(entries.prefix(5)))
        #expect(throws: StoreError.self) { try store.session("kept") }
        #expect(try store.list(uid: nil, label: nil, closed: nil, limit: 10, after: nil).sessions.isEmpty, "hidden while written")
        try kept.append(Array(entries.dropFirst(5)))
        let shown = try kept.finish(final, ledger: ledger)
        #expect(shown.id == "kept")
        let stored = try store.session("kept")
        #expect(stored.session.nowMs == 13_000 && stored.session.lastSeq == final.lastSeq, "its final state, not its first")
        let page = try store.timeline("kept", after: 0, limit: 1000, kind: nil)
        #expect(page.entries.count == entries.count)
        #expect(try store.exists("kept"))
        store.close()
    }

    @Test func anAbandonedReplayLeavesNothing() throws {
        let path = try tempPath()
        let store = try SessionStore(path: path, chunkRows: 3)
        let (_, entries, _) = try replay(id: "gone")
        let (first, _) = try HostSession.create(id: "gone", config: SessionConfig(uid: "u"))
        let kept = try store.keepReplay(first, as: "gone")
        try kept.append(entries)
        kept.abandon()
        #expect(try store.exists("gone") == false)
        let database = try Database(path: path)
        var left = -1
        let removed = try eventuallyOnThisThread(within: 300, pollMs: 20) {
            left = Int(try database.integer("SELECT count(*) FROM sessions") + database.integer("SELECT count(*) FROM timeline"))
            return left == 0
        }
        #expect(removed, "the reclaimer removes an abandoned replay's rows: \(left) left")
        // Its id was never taken.
        let (again, _) = try HostSession.create(id: "gone", config: SessionConfig(uid: "u"))
        _ = try store.keepReplay(again, as: "gone").finish(again, ledger: InMemoryLedger())
        #expect(try store.exists("gone"))
        store.close()
    }

    @Test func anIdTakenMeanwhileRefusesTheReplay() throws {
        let store = try SessionStore(path: try tempPath())
        let (first, _) = try HostSession.create(id: "taken", config: SessionConfig(uid: "u"))
        let kept = try store.keepReplay(first, as: "taken")
        _ = try store.create(id: "taken", config: SessionConfig(uid: "other"))
        #expect(throws: StoreError.sessionExists("taken")) { _ = try kept.finish(first, ledger: InMemoryLedger()) }
        #expect(throws: StoreError.sessionExists("taken")) { _ = try store.keepReplay(first, as: "taken") }
        #expect(try store.session("taken").session.uid == "other", "the other session stays")
        store.close()
    }
}

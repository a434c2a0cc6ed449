import Foundation
import Testing
import TodayHost
import TodayTestSupport
@testable import TodayStore

/// An id purged and created again names another session: whatever followed the first one (an
/// account stream's cursor, a session stream, a long poll) must not carry on into the second.
@Suite struct RecreatedIdTests {
    typealias Listener = EventStreamTests.Listener

    /// Creates an id again the moment its purge commits, on the purging thread, before the
    /// server's streams and long polls hear of the purge: when they look, the id already names
    /// another session. The purged row is reclaimed first, as the reclaimer may have done by
    /// then: the new row must not get its `ord` back. The race a client that pipelines DELETE
    /// and a create wins at times, won every time.
    final class Recreation: @unchecked Sendable {
        private let lock = NSLock()
        // Guarded by `lock`.
        private var armed: String?

        func arm(_ id: String) {
            lock.lock()
            armed = id
            lock.unlock()
        }

        /// `TestServer`'s first observer.
        func changed(_ store: SessionStore, _ ids: [String]) {
            lock.lock()
            guard let id = armed, ids.contains(id), (try? store.session(id)) == nil else {
                lock.unlock()
                return
            }
            armed = nil
            lock.unlock()
            try? store.reclaimRemovedSessions()
            _ = try? store.create(id: id, config: SessionConfig(uid: "u2"))
        }
    }

    /// A server whose `recreation` creates an armed id again as it is purged.
    static func recreatingServer() throws -> (TestServer, Recreation) {
        let recreation = Recreation()
        return (try TestServer(longestWaitMs: WaitTests.longWaitMs, firstObserver: { store, ids in recreation.changed(store, ids) }), recreation)
    }

    /// A session stream followed its id: it outlived the purge and carried the new session's
    /// entries after the old one's last seq.
    @Test func aSessionStreamEndsAtThePurgeEvenWhenTheIdIsCreatedAgainAtOnce() async throws {
        let (server, recreation) = try Self.recreatingServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let old = try await client.timeline("s1")
        let listener = try Listener(server, "/v1/sessions/s1/events")
        #expect(await eventually { listener.parsed.events.count == old.count }, "the stream sent the session so far")

        recreation.arm("s1")
        #expect(try await client.delete("/v1/sessions/s1").status == 204)
        #expect(try await client.get("/v1/sessions/s1")["uid"] == "u2", "s1 was created again as the purge committed")
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let events = await listener.finish().events
        #expect(listener.endedCleanly, "the server ended the purged session's stream")
        #expect(events.map(\.data) == old, "the new s1's entries went to the old one's stream")
    }

    /// A long poll looked again by id after its wake: it parked again on the new session and
    /// answered with its entries.
    @Test func aLongPollOfAPurgedSessionIsNotFoundEvenWhenTheIdIsCreatedAgainAtOnce() async throws {
        let (server, recreation) = try Self.recreatingServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let last = try #require(try await client.timeline("s1").last?["seq"]?.int64Value)
        async let longPoll = WaitTests().get(server, "/v1/sessions/s1/timeline?after=\(last)&waitMs=\(WaitTests.longWaitMs)")
        #expect(await eventually { server.service!.waiters.count == 1 }, "the long poll is parked")

        recreation.arm("s1")
        #expect(try await client.delete("/v1/sessions/s1").status == 204)
        #expect(try await client.get("/v1/sessions/s1")["uid"] == "u2", "s1 was created again as the purge committed")
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let (status, answer) = try await longPoll
        #expect(status == 404, "\(answer)")
        #expect(answer["code"] == "session_not_found")
    }

    /// The ids of the events of `session` an account stream received (`session/seq`).
    static func ids(of session: String, in listener: Listener) -> [String] {
        listener.parsed.events.map(\.id).filter { $0.hasPrefix(session + "/") }
    }

    /// An account stream kept an id's cursor past its purge: the new session's first entries
    /// (those up to the old session's last seq) never arrived.
    @Test func anAccountStreamSendsASessionCreatedAgainUnderAFollowedIdFromItsStart() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "acct", "id": "a1"])
        _ = try await client.post("/v1/sessions/a1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        _ = try await client.post("/v1/sessions/a1/gestures", ["type": "pull", "requestId": "p1"])
        let oldLast = try #require(try await client.timeline("a1").last?["seq"]?.int64Value)
        let listener = try Listener(server, "/v1/events?uid=acct")
        await EventStreamTests().waitForStreams(server, 1)

        #expect(try await client.delete("/v1/sessions/a1").status == 204)
        try await client.create(["uid": "acct", "id": "a1"])
        _ = try await client.post("/v1/sessions/a1/gestures", ["type": "pull", "requestId": "p2"])
        let reborn = try await client.timeline("a1")
        #expect(oldLast > 4, "the old cursor is past the new session's creation entries")
        let events = await listener.until { events, _ in events.count >= reborn.count }.events
        #expect(events.map(\.id) == reborn.map { "a1/\($0["seq"]!.int64Value!)" })
        #expect(events.map(\.data) == reborn)
    }

    /// An account stream let its cursor stand in for the uid check: another account's session
    /// created under the purged id leaked into it.
    @Test func anAccountStreamDropsAPurgedIdCreatedAgainForAnotherAccount() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "alice", "id": "x1"])
        try await client.create(["uid": "alice", "id": "a9"])
        let listener = try Listener(server, "/v1/events?uid=alice")
        await EventStreamTests().waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/x1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        #expect(await eventually { Self.ids(of: "x1", in: listener).count == 2 }, "alice's x1 is followed")

        #expect(try await client.delete("/v1/sessions/x1").status == 204)
        try await client.create(["uid": "mallory", "id": "x1"])
        for pull in 1...3 {
            _ = try await client.post("/v1/sessions/x1/gestures", ["type": "pull", "requestId": .string("p\(pull)")])
        }
        // Two inputs of alice's a9, each waited for: the second is delivered after everything
        // mallory's x1 committed before the first was, so a leak would be there by then.
        _ = try await client.post("/v1/sessions/a9/lifecycle", ["type": "background"])
        #expect(await eventually { Self.ids(of: "a9", in: listener).count >= 1 })
        _ = try await client.post("/v1/sessions/a9/lifecycle", ["type": "foreground"])
        let a9Entries = try await client.timeline("a9").count - 4
        #expect(await eventually { Self.ids(of: "a9", in: listener).count == a9Entries })
        let events = await listener.finish(within: 0).events
        #expect(events.map(\.id).filter { $0.hasPrefix("x1/") } == ["x1/5", "x1/6"],
                "mallory's x1 reached alice's stream: \(events.map(\.id))")
    }
}

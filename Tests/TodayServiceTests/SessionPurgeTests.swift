import Foundation
import Testing
import TodayHost
import TodayStore
import TodayTestSupport

/// `DELETE /v1/sessions/{id}` removes a session as `DELETE ?label=` removes many: `204`, then
/// `404` on every route of it (a second DELETE too), its streams and long polls end, and the id
/// is free again. Teardown (H20), which keeps a session readable, is the lifecycle input.
@Suite struct SessionPurgeTests {
    /// Every route of session `s1`, with a body where it takes one.
    static let routes: [(method: String, path: String, body: String?)] = [
        ("GET", "/v1/sessions/s1", nil), ("DELETE", "/v1/sessions/s1", nil),
        ("GET", "/v1/sessions/s1/timeline", nil), ("GET", "/v1/sessions/s1/watchdogs", nil),
        ("GET", "/v1/sessions/s1/events", nil), ("GET", "/v1/sessions/s1/export", nil),
        ("GET", "/v1/sessions/s1/report", nil), ("GET", "/v1/sessions/s1/report?format=junit", nil),
        ("GET", "/v1/sessions/s1/report/junit", nil),
        ("POST", "/v1/sessions/s1/gestures", #"{"type":"pull"}"#),
        ("POST", "/v1/sessions/s1/lifecycle", #"{"type":"teardown"}"#),
        ("POST", "/v1/sessions/s1/web-events", #"{"type":"todayPage.refreshStarted"}"#),
        ("POST", "/v1/sessions/s1/commands", #"{"type":"todayPage.scrollToSection","batchId":"b"}"#),
        ("POST", "/v1/sessions/s1/clock", #"{"advanceMs":1}"#),
        ("POST", "/v1/sessions/s1/steps", #"[{"clock":{"advanceMs":1}}]"#),
        ("POST", "/v1/sessions/s1/fork", #"{"id":"copy"}"#),
    ]

    @Test func deletePurgesAnActiveSessionEverywhereAndEndsItsStreamAndLongPoll() async throws {
        let server = try TestServer(longestWaitMs: WaitTests.longWaitMs)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        try await client.create(["uid": "u1", "id": "s2"])
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        _ = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 5000])  // M7: a violation to purge too
        let last = try #require(try await client.timeline("s1").last?["seq"]?.int64Value)
        let stream = try EventStreamTests.Listener(server, "/v1/sessions/s1/events")
        #expect(await eventually { server.service!.streams.count == 1 }, "the stream is open")
        async let longPoll = WaitTests().get(server, "/v1/sessions/s1/timeline?after=\(last)&waitMs=\(WaitTests.longWaitMs)")
        #expect(await eventually { server.service!.waiters.count == 1 }, "the long poll is parked")

        let deleted = try await client.delete("/v1/sessions/s1")
        #expect(deleted.status == 204)
        #expect(deleted.bytes.isEmpty, "204 has no body")

        let (polledStatus, polled) = try await longPoll
        #expect(polledStatus == 404)
        #expect(polled["code"] == "session_not_found")
        _ = await stream.finish()
        #expect(stream.endedCleanly, "the server ended the purged session's stream")
        for route in Self.routes {
            let reply = try await client.send(route.method, route.path, body: route.body.map { Array($0.utf8) })
            #expect(reply.status == 404, "\(route.method) \(route.path) after the delete: \(reply.status)")
            expectProblem(reply, 404, "session_not_found")
        }
        let listed = try await client.get("/v1/sessions")
        #expect(listed["sessions"].map { ids(in: $0) } == ["s2"])
        #expect(try await client.get("/v1/violations")["violations"] == [], "its M7 went with it")
        #expect(try await client.get("/v1/sessions/s2").status == 200, "the other session is untouched")

        // The id is free: a new session under it starts from nothing.
        let again = try await client.create(["uid": "u9", "id": "s1"])
        #expect(again["version"] == 1)
        #expect(again["uid"] == "u9")
        try await client.create(["uid": "u9", "id": "fresh"])
        let reborn = try await client.timeline("s1")
        #expect(reborn.map { $0["kind"] } == (try await client.timeline("fresh")).map { $0["kind"] },
                "the new session's own creation entries only")
        #expect(reborn.first?["seq"] == 1)
    }

    /// A label-bound DELETE checked the label, then purged by id in a later transaction: an id
    /// purged and created under another label in between went with another label's token. The
    /// purge checks the label itself, in its own transaction.
    @Test func aLabelBoundPurgeRemovesOnlyASessionOfItsLabel() async throws {
        let server = try TestServer(labelTokens: [("token-a", "team-a"), ("token-b", "team-b")])
        let store = try #require(server.store)
        var config = SessionConfig(uid: "u1")
        config.label = "team-b"
        _ = try store.create(id: "s1", config: config)
        #expect(try store.purge(id: "s1", label: "team-a") == false, "team-a's purge of team-b's session")
        #expect(try store.session("s1").session.config.label == "team-b", "team-b's session is still there")
        let client = Client(server: server)
        let asA = try await client.send("DELETE", "/v1/sessions/s1", headers: ["Authorization": "Bearer token-a"])
        expectProblem(asA, 404, "session_not_found")
        let asB = try await client.send("DELETE", "/v1/sessions/s1", headers: ["Authorization": "Bearer token-b"])
        #expect(asB.status == 204)
        #expect(try store.purge(id: "s1", label: "team-b") == false, "gone")
    }

    @Test func aTornDownSessionStaysReadableUntilDeleted() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let closed = try await client.tearDown("s1")
        #expect(closed.status == 200)
        #expect(closed["session"]?["status"] == "closed")
        expectProblem(try await client.tearDown("s1"), 409, "session_closed")
        #expect(try await client.get("/v1/sessions/s1").status == 200)
        #expect(try await client.delete("/v1/sessions/s1").status == 204)
        expectProblem(try await client.get("/v1/sessions/s1"), 404, "session_not_found")
        expectProblem(try await client.delete("/v1/sessions/s1"), 404, "session_not_found")
    }

    @Test func teardownIsAStepLikeAnyOther() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let batch = try await client.post("/v1/sessions/s1/steps", [["gesture": ["type": "pull", "requestId": "p1"]],
                                                                     ["lifecycle": ["type": "teardown"]]])
        #expect(batch.status == 200)
        #expect(batch["session"]?["status"] == "closed")
        let inputs = try await client.timeline("s1").filter { $0["kind"] == "input" }
        #expect(inputs.last?["data"]?["via"] == "lifecycle")
        #expect(inputs.last?["data"]?["input"] == ["type": "teardown"])
    }
}

import Foundation
import Testing
import TodayHost

/// Cheap polls (ETag, If-None-Match → 304), optimistic inputs (If-Match → 412) and clean-up by
/// label — what dashboards and scripts lean on.
@Suite struct PollingTests {
    @Test func anUnchangedViewAnswers304AndAnyChangeMovesTheTag() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try await client.get("/v1/sessions/s1")
        let tag = try #require(first.header("ETag"))
        #expect(tag == "\"1-4\"")
        #expect(first.header("Cache-Control") == "no-cache")

        let unchanged = try await client.send("GET", "/v1/sessions/s1", headers: ["If-None-Match": tag])
        #expect(unchanged.status == 304)
        #expect(unchanged.bytes.isEmpty)
        #expect(unchanged.header("ETag") == tag)

        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        let changed = try await client.send("GET", "/v1/sessions/s1", headers: ["If-None-Match": tag])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") == "\"2-8\"")
        #expect(changed["version"] == 2)
    }

    @Test func timelinePagesCarryATagToo() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let page = try await client.get("/v1/sessions/s1/timeline?after=2")
        let tag = try #require(page.header("ETag"))
        let same = try await client.send("GET", "/v1/sessions/s1/timeline?after=2", headers: ["If-None-Match": tag])
        #expect(same.status == 304)
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull"])
        let moved = try await client.send("GET", "/v1/sessions/s1/timeline?after=2", headers: ["If-None-Match": tag])
        #expect(moved.status == 200)
        #expect(moved["next"] == 7)
    }

    @Test func ifMatchRefusesAnInputWhenTheSessionMovedOn() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let applied = try await client.send("POST", "/v1/sessions/s1/gestures", body: Array(#"{"type":"pull"}"#.utf8),
                                            headers: ["If-Match": "1"])
        #expect(applied.status == 200)
        let stale = try await client.send("POST", "/v1/sessions/s1/lifecycle", body: Array(#"{"type":"background"}"#.utf8),
                                          headers: ["If-Match": "\"1\""])
        expectProblem(stale, 412, "precondition_failed")
        let view = try await client.get("/v1/sessions/s1")
        #expect(view["version"] == 2, "the refused input changed nothing")
        #expect(view["app"]?["state"] == "foreground")
        let current = try await client.send("POST", "/v1/sessions/s1/lifecycle", body: Array(#"{"type":"background"}"#.utf8),
                                            headers: ["If-Match": "2"])
        #expect(current.status == 200)
        let garbage = try await client.send("POST", "/v1/sessions/s1/gestures", body: Array(#"{"type":"pull"}"#.utf8),
                                            headers: ["If-Match": "soon"])
        expectProblem(garbage, 400, "invalid_field", field: "If-Match")
    }

    @Test func deletingOneLabelLeavesTheOtherUntouchedAndResetPurgesAll() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        for index in 0..<3 { try await client.create(["uid": "u", "id": .string("a\(index)"), "label": "run-a"]) }
        for index in 0..<2 { try await client.create(["uid": "u", "id": .string("b\(index)"), "label": "run-b"]) }
        _ = try await client.post("/v1/sessions/b0/gestures", ["type": "pull", "requestId": "p1"])
        let timelineB = try await client.timeline("b0")

        let deleted = try await client.delete("/v1/sessions?label=run-a")
        #expect(deleted.json == ["deleted": 3])
        #expect(ids(in: (try await client.get("/v1/sessions?label=run-a"))["sessions"] ?? .null) == [])
        expectProblem(try await client.get("/v1/sessions/a0"), 404, "session_not_found")
        #expect(ids(in: (try await client.get("/v1/sessions"))["sessions"] ?? .null) == ["b0", "b1"])
        #expect(try await client.timeline("b0") == timelineB)
        // The id is free again: the purged session is gone, not closed.
        try await client.create(["uid": "u", "id": "a0"])

        expectProblem(try await client.delete("/v1/sessions"), 400, "invalid_field", field: "label")
        let reset = try await client.post("/v1/reset", raw: "")
        #expect(reset.json == ["deleted": 3])
        #expect(ids(in: (try await client.get("/v1/sessions"))["sessions"] ?? .null) == [])
    }
}

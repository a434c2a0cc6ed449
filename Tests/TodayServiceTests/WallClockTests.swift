import Foundation
import Testing
import TodayHost

/// `wall` sessions (C1): watchdogs fire on their own, and after a restart the ones that fell
/// due while the server was down fire at once, in due order.
@Suite struct WallClockTests {
    /// Polls the timeline (bounded) until an entry of `kind` exists.
    func waitForEntries(_ client: Client, _ id: String, kind: String, count: Int, within seconds: Double) async throws -> [JSON] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let entries = try await client.timeline(id).filter { $0["kind"] == .string(kind) }
            if entries.count >= count || Date() > deadline { return entries }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    @Test func watchdogsFireOnTheirOwnWithin50ms() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall",
                                 "timing": ["softRefreshDeadlineMs": 300, "pullWatchdogMs": 600]])
        _ = try await client.post("/v1/sessions/w1/gestures", ["type": "pull", "requestId": "p1"])
        let fired = try await waitForEntries(client, "w1", kind: "watchdog", count: 2, within: 5)
        #expect(fired.map { $0["type"] } == ["softRefreshDeadline", "pullWatchdog"])
        // Each entry carries its due time as atMs and how late it really fired.
        let due = try #require(fired.first?["atMs"]?.int64Value)
        let pulledAt = try #require(try await client.timeline("w1").first { $0["kind"] == "input" && $0["type"] == "pull" }?["atMs"]?.int64Value)
        #expect(due == pulledAt + 300, "its due time: the pull's clock reading + softRefreshDeadlineMs")
        for entry in fired {
            let late = try #require(entry["data"]?["lateMs"]?.int64Value)
            #expect(late >= 0 && late <= 50, "fired \(late) ms late")
        }
        let view = try await client.get("/v1/sessions/w1")
        #expect(view["watchdogs"] == [])
        #expect(view["pull"]?["requestId"] == .null)
        #expect((view["clock"]?["nowMs"]?.int64Value ?? 0) >= 600)
    }

    @Test func timersDueDuringDowntimeFireAtOnceAfterARestart() async throws {
        let server = try TestServer()
        var client = Client(server: server)
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall",
                                 "timing": ["softRefreshDeadlineMs": 400, "pullWatchdogMs": 500, "headerWatchdogMs": 450]])
        _ = try await client.post("/v1/sessions/w1/gestures", ["type": "pull", "requestId": "p1"])
        _ = try await client.post("/v1/sessions/w1/web-events", [
            "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "c1", "presentation": "header",
        ])
        server.stop()
        try await Task.sleep(nanoseconds: 900_000_000)
        try server.start()
        client = Client(server: server)
        let fired = try await waitForEntries(client, "w1", kind: "watchdog", count: 2, within: 5)
        // The deadline (400) reloads the document, which clears the header: its watchdog goes
        // with it; the spinner follows the reload and its watchdog (500) fires next.
        #expect(fired.map { $0["type"] } == ["softRefreshDeadline", "pullWatchdog"])
        let lateness = fired.compactMap { $0["data"]?["lateMs"]?.int64Value }
        #expect(lateness.count == 2)
        #expect(lateness.allSatisfy { $0 >= 300 }, "they fell due while the server was down: \(lateness)")
        let atMs = fired.compactMap { $0["atMs"]?.int64Value }
        #expect(atMs == atMs.sorted(), "in due order")
    }

    @Test func wallClockIncludesDowntimeAndNeverGoesBack() async throws {
        let server = try TestServer()
        var client = Client(server: server)
        let created = try await client.create(["uid": "u1", "id": "w1", "clock": "wall"])
        #expect((created["clock"]?["nowMs"]?.int64Value ?? -1) >= 0)
        server.stop()
        try await Task.sleep(nanoseconds: 300_000_000)
        try server.start()
        client = Client(server: server)
        let first = try await client.get("/v1/sessions/w1")
        let second = try await client.get("/v1/sessions/w1")
        let firstNow = try #require(first["clock"]?["nowMs"]?.int64Value)
        let secondNow = try #require(second["clock"]?["nowMs"]?.int64Value)
        #expect(firstNow >= 300)
        #expect(secondNow >= firstNow)
    }

    @Test func aWallSessionsTagMovesWhenATimerFiresButNotWithItsClock() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall", "timing": ["softRefreshDeadlineMs": 200]])
        _ = try await client.post("/v1/sessions/w1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        let before = try await client.get("/v1/sessions/w1")
        let tag = try #require(before.header("ETag"))
        let again = try await client.send("GET", "/v1/sessions/w1", headers: ["If-None-Match": tag])
        #expect(again.status == 304, "only the wall clock moved")
        try await Task.sleep(nanoseconds: 400_000_000)
        let after = try await client.send("GET", "/v1/sessions/w1", headers: ["If-None-Match": tag])
        #expect(after.status == 200, "the deadline fired: a timeline entry, no input")
        #expect(after["version"] == before["version"])
        #expect(after.header("ETag") != tag)
    }

    @Test func anIdleSessionClosesAfterItsTtlAndIsPurgedAfterTheRetention() async throws {
        let server = try TestServer(retentionMs: 600)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "idle", "clock": "wall", "ttlMs": 300])
        try await client.create(["uid": "u1", "id": "kept", "clock": "wall"])
        // An input keeps it alive: the idle time starts again.
        try await Task.sleep(nanoseconds: 200_000_000)
        _ = try await client.post("/v1/sessions/idle/lifecycle", ["type": "tabActivated"])
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect((try await client.get("/v1/sessions/idle"))["status"] == "active")

        let deadline = Date().addingTimeInterval(5)
        var closed = try await client.get("/v1/sessions/idle")
        while closed["status"] != "closed", Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
            closed = try await client.get("/v1/sessions/idle")
        }
        #expect(closed["status"] == "closed", "closed after 300 ms without input, kept readable")
        let inputs = try await client.timeline("idle").filter { $0["kind"] == "input" }
        #expect(inputs.last?["type"] == "teardown", "the expiry is a teardown like any other (H20)")
        #expect((try await client.get("/v1/sessions/kept"))["status"] == "active", "no ttlMs: never expires")

        // Retention: the closed session is purged, the other stays.
        while (try await client.get("/v1/sessions/idle")).status != 404, Date() < deadline.addingTimeInterval(5) {
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        expectProblem(try await client.get("/v1/sessions/idle"), 404, "session_not_found")
        #expect((try await client.get("/v1/sessions/kept")).status == 200)
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "ttlMs": 0]), 400, "invalid_field", field: "ttlMs")
    }
}


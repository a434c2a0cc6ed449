import Foundation
import Testing
import TodayHost
@testable import TodayServer

/// Issue 12, item 1: sums of client numbers on a session clock once overflowed `Int64` and took
/// the whole server down. Every move past the clock's ceiling (C1, 9e15 ms) is `400` and changes
/// nothing; the server goes on serving.
@Suite struct ClockCeilingTests {
    /// The default session's latest move: the end less its longest timer (12 s watchdogs).
    static let latest = clockCeilingMs - 12_000

    @Test func aBatchOfAdvancesPastTheLatestMoveIsRefusedWhole() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let before = try await client.get("/v1/sessions/s1")
        let steps = Array(repeating: JSON.object([("clock", ["advanceMs": .int(clockCeilingMs)])]), count: StepsHandler.maximumSteps)
        let reply = try await client.post("/v1/sessions/s1/steps", .array(steps))
        expectProblem(reply, 400, "invalid_field", field: "advanceMs")
        #expect(reply["detail"]?.stringValue?.hasPrefix("step 0: ") == true, "\(reply.text)")
        let two = try await client.post("/v1/sessions/s1/steps", [["clock": ["advanceMs": .int(Self.latest)]], ["clock": ["advanceMs": 1]]])
        expectProblem(two, 400, "invalid_field", field: "advanceMs")
        #expect(two["detail"]?.stringValue?.hasPrefix("step 1: ") == true, "\(two.text)")
        #expect((try await client.get("/v1/sessions/s1")).json == before.json)
        #expect((try await client.get("/healthz")).status == 200)
    }

    /// Issue 23, item 3 (C1): seen, `advanceMs: 8999999999999999` applied and a pull then armed
    /// watchdogs no move could reach. A move stops at the end less the longest timer, so every
    /// timer an input arms there is still within reach.
    @Test func movesStopWhereEveryTimerAnInputArmsStaysReachable() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let seen = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 8_999_999_999_999_999])
        expectProblem(seen, 400, "invalid_field", field: "advanceMs")
        #expect(seen["detail"]?.stringValue?.contains("past \(Self.latest) ms: the clock's end (\(clockCeilingMs) ms) less this session's longest timer (pullWatchdogMs, 12000 ms)") == true,
                "\(seen.text)")
        expectProblem(try await client.post("/v1/sessions/s1/clock", ["toMs": .int(Self.latest + 1)]), 400, "invalid_field", field: "toMs")
        let first = try await client.post("/v1/sessions/s1/clock", ["toMs": .int(Self.latest)])
        #expect(first.status == 200)
        #expect(first["session"]?["clock"]?["nowMs"] == .int(Self.latest))
        for (move, field): (JSON, String) in [(["advanceMs": .int(clockCeilingMs)], "advanceMs"), (["advanceMs": 1], "advanceMs"),
                                               (["toMs": .int(clockCeilingMs)], "toMs")] {
            expectProblem(try await client.post("/v1/sessions/s1/clock", move), 400, "invalid_field", field: field)
        }
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 2, "only the first move was applied")
        #expect((try await client.post("/v1/sessions/s1/clock", ["advanceMs": 0])).status == 200)
        #expect((try await client.post("/v1/sessions/s1/clock", ["toMs": .int(Self.latest)])).status == 200, "a move to now")
        let pulled = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        #expect(pulled["session"]?["watchdogs"]?.arrayValue?.map { $0["dueAtMs"] } == [.int(Self.latest + 5000), .int(clockCeilingMs)])
        let idle = try await client.post("/v1/sessions/s1/clock", ["runUntilIdle": true])
        #expect(idle.status == 200, "the pull's watchdog is at the clock's end, within reach: \(idle.text)")
        #expect(idle["session"]?["clock"]?["nowMs"] == .int(clockCeilingMs))
        #expect(idle["session"]?["pull"]?["state"] == "idle")
    }

    /// A session whose timer is as long as the clock runs can move no further than 0; the
    /// timer its input arms is due at the end, where runUntilIdle still reaches it. Only firing
    /// a timer takes the clock past the latest move; an input arming a timer there can put it
    /// past the end, and the move that would reach it is refused (docs/RULES.md, C1).
    @Test func aTimerAsLongAsTheClockLeavesNoRoomToMoveButStaysReachable() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1", "timing": ["pullWatchdogMs": .int(clockCeilingMs)]])
        expectProblem(try await client.post("/v1/sessions/s1/clock", ["advanceMs": 10]), 400, "invalid_field", field: "advanceMs")
        #expect((try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])).status == 200)
        let reached = try await client.post("/v1/sessions/s1/clock", ["runUntilIdle": true])
        #expect(reached.status == 200, "\(reached.text)")
        #expect(reached["session"]?["clock"]?["nowMs"] == .int(clockCeilingMs))
        #expect((try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p2"])).status == 200)
        let before = try await client.get("/v1/sessions/s1")
        for move: JSON in [["runUntilIdle": true], ["toNextTimer": true], ["advanceMs": 1]] {
            let reply = try await client.post("/v1/sessions/s1/clock", move)
            #expect(reply.status == 400, "\(reply.text)")
        }
        #expect((try await client.get("/v1/sessions/s1")).json == before.json)
        #expect((try await client.get("/healthz")).status == 200)
    }
}

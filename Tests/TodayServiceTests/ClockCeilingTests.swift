import Foundation
import Testing
import TodayHost
@testable import TodayServer

/// Issue 12, item 1: sums of client numbers on a session clock once overflowed `Int64` and took
/// the whole server down. Every move past the clock's ceiling (C1, 9e15 ms) is `400` and changes
/// nothing; the server goes on serving.
@Suite struct ClockCeilingTests {
    @Test func aBatchOfAdvancesPastTheCeilingIsRefusedWhole() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let before = try await client.get("/v1/sessions/s1")
        let steps = Array(repeating: JSON.object([("clock", ["advanceMs": .int(clockCeilingMs)])]), count: StepsHandler.maximumSteps)
        let reply = try await client.post("/v1/sessions/s1/steps", .array(steps))
        expectProblem(reply, 400, "invalid_field", field: "advanceMs")
        #expect(reply["detail"]?.stringValue?.hasPrefix("step 1: ") == true, "\(reply.text)")
        #expect((try await client.get("/v1/sessions/s1")).json == before.json)
        #expect((try await client.get("/healthz")).status == 200)
    }

    @Test func separateAdvancesStopAtTheCeilingAndTheSessionStaysUsable() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try await client.post("/v1/sessions/s1/clock", ["advanceMs": .int(clockCeilingMs)])
        #expect(first.status == 200)
        #expect(first["session"]?["clock"]?["nowMs"] == .int(clockCeilingMs))
        for _ in 0..<3 {
            expectProblem(try await client.post("/v1/sessions/s1/clock", ["advanceMs": .int(clockCeilingMs)]),
                          400, "invalid_field", field: "advanceMs")
        }
        expectProblem(try await client.post("/v1/sessions/s1/clock", ["advanceMs": 1]), 400, "invalid_field", field: "advanceMs")
        let view = try await client.get("/v1/sessions/s1")
        #expect(view["version"] == 2, "only the first advance was applied")
        #expect((try await client.post("/v1/sessions/s1/clock", ["advanceMs": 0])).status == 200)
        #expect((try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])).status == 200)
    }

    @Test func aWatchdogArmedPastTheCeilingIsNeverReached() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1", "timing": ["pullWatchdogMs": .int(clockCeilingMs)]])
        _ = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 10])
        let pulled = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        #expect(pulled.status == 200)
        let before = try await client.get("/v1/sessions/s1")
        guard case let .array(watchdogs)? = before["watchdogs"] else { Issue.record("no watchdogs"); return }
        #expect(watchdogs.contains { $0["dueAtMs"] == .int(clockCeilingMs + 10) }, "\(before.text)")
        for move: JSON in [["runUntilIdle": true], ["advanceMs": .int(clockCeilingMs)]] {
            let reply = try await client.post("/v1/sessions/s1/clock", move)
            #expect(reply.status == 400, "\(reply.text)")
        }
        #expect((try await client.get("/v1/sessions/s1")).json == before.json)
        #expect((try await client.get("/healthz")).status == 200)
    }
}

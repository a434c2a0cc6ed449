import Foundation
import Testing
import TodayHost

/// Inputs to one session are serialized; inputs to different sessions do not corrupt each other.
@Suite struct ConcurrencyTests {
    @Test func eightClientsIntoOneSession() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let perClient = 25
        let accepted = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var count = 0
                    for step in 0..<perClient {
                        let reply: Client.Reply
                        switch step % 4 {
                        case 0: reply = try await client.post("/v1/sessions/s1/lifecycle", ["type": "tabActivated", "requestId": .string("w\(worker)-\(step)")])
                        case 1: reply = try await client.post("/v1/sessions/s1/web-events", [
                            "type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string("w\(worker)-\(step - 1)"),
                            "mode": "soft", "status": "succeeded"])
                        case 2: reply = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 700])
                        default: reply = try await client.post("/v1/sessions/s1/gestures", ["type": "pull"])
                        }
                        if reply.status == 200 { count += 1 }
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(accepted == 8 * perClient)
        let view = try await client.get("/v1/sessions/s1")
        #expect(view["version"] == .int(Int64(1 + accepted)))
        let timeline = try await client.timeline("s1")
        #expect(timeline.compactMap { $0["seq"]?.int64Value } == Array(1...Int64(timeline.count)), "seq has no gaps")
        #expect(view["counts"]?["timeline"] == .int(Int64(timeline.count)))
        #expect(timeline.filter { $0["kind"] == "input" }.count == 1 + accepted)
    }

    @Test func parallelSessionsStayApart() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        for index in 0..<4 { try await client.create(["uid": .string("u\(index)"), "id": .string("s\(index)")]) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    for _ in 0..<10 { _ = try await client.post("/v1/sessions/s\(index)/lifecycle", ["type": "timerTick"]) }
                }
            }
            try await group.waitForAll()
        }
        for index in 0..<4 {
            let view = try await client.get("/v1/sessions/s\(index)")
            #expect(view["version"] == 11)
            #expect(view["uid"] == .string("u\(index)"))
            #expect(view["refresh"]?["pending"].map { pendingIds($0).count } == 10)
        }
    }
}

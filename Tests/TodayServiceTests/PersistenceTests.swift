import Foundation
import Testing
import TodayHost

/// Sessions live in SQLite: a restart in the middle of a scenario changes nothing that follows.
@Suite struct PersistenceTests {
    /// A scenario in two halves; the restart (if any) falls between them.
    static let firstHalf: [(String, JSON)] = [
        ("gestures", ["type": "pull", "requestId": "p1"]),
        ("web-events", ["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "cache-1", "presentation": "header"]),
        ("lifecycle", ["type": "tabActivated"]),
        ("clock", ["advanceMs": 3000]),
        ("lifecycle", ["type": "timerTick"]),
    ]
    static let secondHalf: [(String, JSON)] = [
        ("web-events", ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "p1", "mode": "soft", "status": "failed"]),
        ("clock", ["toNextTimer": true]),
        ("gestures", ["type": "pull"]),
        ("clock", ["runUntilIdle": true]),
        ("web-events", ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "cache-1", "mode": "soft", "status": "succeeded"]),
    ]

    func play(_ steps: [(String, JSON)], _ client: Client) async throws -> [JSON] {
        var answers: [JSON] = []
        for (endpoint, body) in steps {
            let reply = try await client.post("/v1/sessions/s1/\(endpoint)", body)
            #expect(reply.status == 200, "\(endpoint) \(reply.text)")
            answers.append(reply.json)
        }
        return answers
    }

    @Test func aRestartMidScenarioContinuesIdentically() async throws {
        let straight = try TestServer()
        let straightClient = Client(server: straight)
        try await straightClient.create(["uid": "u1", "id": "s1"])
        _ = try await play(Self.firstHalf, straightClient)
        let expectedAnswers = try await play(Self.secondHalf, straightClient)

        let restarted = try TestServer()
        var client = Client(server: restarted)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await play(Self.firstHalf, client)
        let beforeRestart = try await client.get("/v1/sessions/s1")
        #expect(beforeRestart["watchdogs"].map { watchdogKinds($0) } == ["softRefreshDeadline", "pullWatchdog", "headerWatchdog"])

        try restarted.restart()
        client = Client(server: restarted)
        let afterRestart = try await client.get("/v1/sessions/s1")
        #expect(afterRestart.json == beforeRestart.json, "pending watchdogs and every field survive")
        let answers = try await play(Self.secondHalf, client)
        #expect(answers == expectedAnswers)
        #expect(try await client.timeline("s1") == (try await straightClient.timeline("s1")))
    }

    @Test func serverMadeIdsSurviveARestartWithoutRepeating() async throws {
        let server = try TestServer()
        var client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try await client.post("/v1/sessions/s1/lifecycle", ["type": "tabActivated"])
        try server.restart()
        client = Client(server: server)
        let second = try await client.post("/v1/sessions/s1/lifecycle", ["type": "tabActivated"])
        let firstId = first["session"]?["refresh"]?["pending"].flatMap { pendingIds($0) }
        let secondIds = second["session"]?["refresh"]?["pending"].flatMap { pendingIds($0) }
        #expect(firstId?.count == 1)
        #expect(secondIds?.count == 2)
        #expect(Set(secondIds ?? []).count == 2, "the counter lives in the stored state")
        // An id used before the restart is still refused as a caller's id (the ledger is stored).
        let reused = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": .string(firstId?.first ?? "")])
        #expect(reused["code"] == "invalid_field")
    }
}

func watchdogKinds(_ watchdogs: JSON) -> [String] {
    guard case let .array(items) = watchdogs else { return [] }
    return items.compactMap { $0["kind"]?.stringValue }
}

func pendingIds(_ pending: JSON) -> [String] {
    guard case let .array(items) = pending else { return [] }
    return items.compactMap { $0["requestId"]?.stringValue }
}

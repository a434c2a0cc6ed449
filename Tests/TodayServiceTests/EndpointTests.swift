import Foundation
import Testing
import TodayHost

/// Every endpoint of the contract against the real server, with a real client.
@Suite struct EndpointTests {
    @Test func healthOpenAPIAndDashboard() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let health = try await client.get("/healthz")
        #expect(health.status == 200)
        #expect(health.json == ["status": "ok"])
        #expect(health.header("Content-Type") == "application/json; charset=utf-8")
        let openapi = try await client.get("/openapi.yaml")
        #expect(openapi.status == 200)
        #expect(openapi.header("Content-Type") == "application/yaml")
        #expect(openapi.bytes == (try RepositoryFiles.bytes("OpenAPI/todaysim.yaml")), "GET /openapi.yaml is the file byte for byte")
        let dashboard = try await client.get("/")
        #expect(dashboard.status == 200)
        #expect(dashboard.header("Content-Type") == "text/html; charset=utf-8")
        #expect(dashboard.bytes == (try RepositoryFiles.bytes("Web/dashboard.html")), "GET / is Web/dashboard.html byte for byte")
    }

    @Test func createReadAndList() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let created = try await client.post("/v1/sessions", ["uid": "u1", "id": "s1", "platform": "android", "timing": ["pullWatchdogMs": 9000]])
        #expect(created.status == 201)
        #expect(created.header("Location") == "/v1/sessions/s1")
        #expect(created["version"] == 1)
        #expect(created["platform"] == "android")
        #expect(created["timing"]?["pullWatchdogMs"] == 9000)
        #expect(created["counts"] == ["timeline": 4, "violations": 0])

        let generated = try await client.create(["uid": "u2"])
        let generatedId = try #require(generated["id"]?.stringValue)
        #expect(generatedId.count == 36, "a server-made UUID")

        let read = try await client.get("/v1/sessions/s1")
        #expect(read.status == 200)
        #expect(read.json == created.json)

        try await client.create(["uid": "u1", "id": "s3"])
        let all = try await client.get("/v1/sessions")
        #expect(all["sessions"].map { ids(in: $0) } == ["s1", generatedId, "s3"], "oldest first")
        #expect(all["next"] == .null)
        let ofU1 = try await client.get("/v1/sessions?uid=u1")
        #expect(ofU1["sessions"].map { ids(in: $0) } == ["s1", "s3"])

        let firstPage = try await client.get("/v1/sessions?limit=2")
        #expect(firstPage["sessions"].map { ids(in: $0) } == ["s1", generatedId])
        let cursor = try #require(firstPage["next"]?.stringValue)
        let secondPage = try await client.get("/v1/sessions?limit=2&after=\(cursor)")
        #expect(secondPage["sessions"].map { ids(in: $0) } == ["s3"])
        #expect(secondPage["next"] == .null)

        try await client.tearDown("s3")
        let closed = try await client.get("/v1/sessions?status=closed")
        #expect(closed["sessions"].map { ids(in: $0) } == ["s3"])
        let active = try await client.get("/v1/sessions?status=active&uid=u1")
        #expect(active["sessions"].map { ids(in: $0) } == ["s1"])
    }

    @Test func inputsAnswerWithOutcomeEntriesAndView() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])

        let pull = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        #expect(pull.status == 200)
        #expect(pull["outcome"] == "applied")
        #expect(pull["reason"] == .null)
        #expect(pull["resolution"] == .null)
        #expect(kinds(pull["entries"]) == ["input", "pull", "emit"])
        #expect(pull["session"]?["pull"]?["requestId"] == "p1")
        #expect(pull["session"]?["version"] == 2)

        let started = try await client.post("/v1/sessions/s1/web-events", [
            "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w1", "presentation": "header",
        ])
        #expect(started["outcome"] == "applied")
        #expect(started["session"]?["header"] == ["state": "refreshing", "requestId": "w1"])

        let rejected = try await client.post("/v1/sessions/s1/web-events", [
            "type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "p1", "mode": "medium", "status": "succeeded",
        ])
        #expect(rejected.status == 200, "a bridge rejection is not an HTTP error")
        #expect(rejected["outcome"] == "rejected")
        #expect(rejected["reason"] == "mode: must be \"hard\" or \"soft\", got \"medium\"")

        let lifecycle = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        #expect(lifecycle["outcome"] == "applied")
        let again = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        #expect(again["outcome"] == "ignored")
        #expect(again["reason"] == "alreadyBackground")

        let command = try await client.post("/v1/sessions/s1/commands", ["type": "todayPage.scrollToSection", "batchId": "b7"])
        #expect(command["entries"].map { payloads(in: $0) } == [[
            "type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "b7", "behavior": "smooth", "highlight": true,
        ]])

        let clock = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 5000])
        #expect(clock["session"]?["clock"] == ["mode": "virtual", "nowMs": 5000])
        #expect(kinds(clock["entries"]).contains("watchdog"))

        let watchdogs = try await client.get("/v1/sessions/s1/watchdogs")
        #expect(watchdogs.json == ["watchdogs": clock["session"]?["watchdogs"] ?? .null])

        let next = try await client.post("/v1/sessions/s1/clock", ["toNextTimer": true])
        #expect(next["outcome"] == "applied")
        let idle = try await client.post("/v1/sessions/s1/clock", ["runUntilIdle": true])
        #expect(idle["session"]?["watchdogs"] == [])
        let noTimer = try await client.post("/v1/sessions/s1/clock", ["toNextTimer": true])
        #expect(noTimer["reason"] == "noTimer")
        let to = try await client.post("/v1/sessions/s1/clock", ["toMs": 30_000])
        #expect(to["session"]?["clock"]?["nowMs"] == 30_000)
    }

    @Test func timelinePagesByAfterAndKind() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])

        let first = try await client.get("/v1/sessions/s1/timeline?limit=2")
        #expect(first["entries"].map { seqs(in: $0) } == [1, 2])
        #expect(first["next"] == 2)
        #expect(first["more"] == true)
        let rest = try await client.get("/v1/sessions/s1/timeline?after=2")
        #expect(rest["entries"].map { seqs(in: $0) } == [3, 4, 5, 6, 7])
        #expect(rest["next"] == 7)
        #expect(rest["more"] == false)
        let tail = try await client.get("/v1/sessions/s1/timeline?after=7")
        #expect(tail.json == ["entries": [], "next": 7, "more": false], "a tailing client keeps its cursor")
        let emits = try await client.get("/v1/sessions/s1/timeline?kind=emit")
        #expect(emits["entries"].map { seqs(in: $0) } == [7])
        let entry = try #require(rest["entries"].flatMap { if case let .array(items) = $0 { return items.last } else { return nil } })
        #expect(entry == [
            "seq": 7, "atMs": 0, "kind": "emit", "type": "todayPage.refreshRequested", "requestId": "p1", "rule": "H10",
            "data": ["payload": ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "p1", "reason": "user_pull"]],
        ])
    }

    @Test func teardownClosesOnceAndKeepsTheSessionReadable() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let closed = try await client.tearDown("s1")
        #expect(closed.status == 200)
        #expect(closed["outcome"] == "applied")
        #expect(closed["session"]?["status"] == "closed")
        #expect(closed["session"]?["version"] == 3)
        #expect(closed["session"]?["pull"]?["lastOutcome"] == "cancelled")
        #expect(closed["session"]?["watchdogs"] == [])
        let again = try await client.tearDown("s1")
        #expect(again.status == 409)
        #expect(again["code"] == "session_closed")
        let input = try await client.post("/v1/sessions/s1/gestures", ["type": "pull"])
        #expect(input["code"] == "session_closed")
        let badBody = try await client.post("/v1/sessions/s1/gestures", raw: "{]")
        #expect(badBody["code"] == "session_closed", "closed comes before a bad body")
        let read = try await client.get("/v1/sessions/s1")
        #expect(read.status == 200)
        #expect(read["version"] == 3)
    }

    @Test func theLogNamesRoutesNeverUidsOrURLs() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "secret-uid-42", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "accountSwitch", "uid": "other-secret-7"])
        _ = try await client.get("/v1/sessions?uid=secret-uid-42")
        _ = try await client.get("/v1/sessions/s1/timeline")
        let lines = server.logLines.all
        #expect(lines.contains { $0.hasPrefix("POST /v1/sessions/{id}/lifecycle 200 ") && $0.hasSuffix("ms") })
        #expect(lines.contains { $0.hasPrefix("GET /v1/sessions 200 ") })
        for line in lines {
            #expect(!line.contains("secret-uid-42") && !line.contains("other-secret-7") && !line.contains("uid="), "\(line)")
        }
    }
}

func ids(in sessions: JSON) -> [String] {
    guard case let .array(items) = sessions else { return [] }
    return items.compactMap { $0["id"]?.stringValue }
}

func kinds(_ entries: JSON?) -> [String] {
    guard case let .array(items)? = entries else { return [] }
    return items.compactMap { $0["kind"]?.stringValue }
}

func seqs(in entries: JSON) -> [Int64] {
    guard case let .array(items) = entries else { return [] }
    return items.compactMap { $0["seq"]?.int64Value }
}

func payloads(in entries: JSON) -> [JSON] {
    guard case let .array(items) = entries else { return [] }
    return items.filter { $0["kind"] == "emit" }.compactMap { $0["data"]?["payload"] }
}

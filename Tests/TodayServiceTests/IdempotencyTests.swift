import Foundation
import Testing
import TodayHost

/// `Idempotency-Key`: a retry gets the first answer back and nothing is applied twice.
@Suite struct IdempotencyTests {
    func post(_ client: Client, _ path: String, _ body: String, key: String) async throws -> Client.Reply {
        try await client.send("POST", path, body: Array(body.utf8), headers: ["Idempotency-Key": key])
    }

    @Test func aRetryReplaysTheFirstAnswerWithoutApplyingAgain() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try await post(client, "/v1/sessions/s1/gestures", #"{"type":"pull"}"#, key: "k-1")
        #expect(first.status == 200)
        #expect(first.header("Idempotent-Replayed") == nil)
        let retry = try await post(client, "/v1/sessions/s1/gestures", #"{"type":"pull"}"#, key: "k-1")
        #expect(retry.status == 200)
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(retry.bytes == first.bytes, "the very same answer")
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 2, "applied once")

        let other = try await post(client, "/v1/sessions/s1/lifecycle", #"{"type":"background"}"#, key: "k-1")
        expectProblem(other, 422, "idempotency_conflict")
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 2)
        expectProblem(try await post(client, "/v1/sessions/s1/gestures", #"{"type":"pull"}"#, key: ""), 400, "invalid_field",
                      field: "Idempotency-Key")
    }

    @Test func concurrentRetriesApplyOnceAndBatchesReplayToo() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let answers = try await withThrowingTaskGroup(of: Client.Reply.self) { group in
            for _ in 0..<8 {
                group.addTask { try await post(client, "/v1/sessions/s1/lifecycle", #"{"type":"tabActivated"}"#, key: "same") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.allSatisfy { $0.status == 200 })
        #expect(Set(answers.map(\.bytes)).count == 1, "every retry got the first answer")
        #expect(answers.filter { $0.header("Idempotent-Replayed") == "true" }.count == 7)
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 2)

        let batch = #"[{"gesture":{"type":"pull"}},{"clock":{"advanceMs":100}}]"#
        let applied = try await post(client, "/v1/sessions/s1/steps", batch, key: "batch-1")
        let replayed = try await post(client, "/v1/sessions/s1/steps", batch, key: "batch-1")
        #expect(applied.status == 200)
        #expect(replayed.bytes == applied.bytes)
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 4)
    }

    @Test func keysSurviveARestart() async throws {
        let server = try TestServer()
        var client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try await post(client, "/v1/sessions/s1/gestures", #"{"type":"pull"}"#, key: "k")
        try server.restart()
        client = Client(server: server)
        let retry = try await post(client, "/v1/sessions/s1/gestures", #"{"type":"pull"}"#, key: "k")
        #expect(retry.bytes == first.bytes)
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 2)
    }
}

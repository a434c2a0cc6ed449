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

    /// Keys are per session: the same key on another session is another key, and a session
    /// removed takes its keys along — a retry against a new session under the same id is
    /// applied to it, not answered from the removed one.
    @Test func aKeyBelongsToItsSessionAndGoesWithIt() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "k1"])
        try await client.create(["uid": "u1", "id": "k2"])
        let body = #"{"type":"pull","requestId":"p1"}"#
        #expect(try await post(client, "/v1/sessions/k1/gestures", body, key: "step-1").status == 200)
        let elsewhere = try await post(client, "/v1/sessions/k2/gestures", body, key: "step-1")
        #expect(elsewhere.status == 200)
        #expect(elsewhere.header("Idempotent-Replayed") == nil, "another session's key is another key")
        #expect((try await client.get("/v1/sessions/k2"))["version"] == 2)

        #expect(try await client.delete("/v1/sessions/k1").status == 204)
        try await client.create(["uid": "u2", "id": "k1"])
        let again = try await post(client, "/v1/sessions/k1/gestures", body, key: "step-1")
        #expect(again.status == 200)
        #expect(again.header("Idempotent-Replayed") == nil, "the removed session's answer is gone with it")
        let view = try await client.get("/v1/sessions/k1")
        #expect(view["uid"] == "u2")
        #expect(view["version"] == 2, "applied to the new session")
        #expect(view["pull"]?["state"] == "refreshing")
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

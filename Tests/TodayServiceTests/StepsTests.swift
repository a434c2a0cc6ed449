import Foundation
import Testing
import TodayHost

/// `POST …/steps`: a script's inputs in one transaction, all or nothing, with `$ref`.
@Suite struct StepsTests {
    @Test func aBatchAppliesInOrderAndARefAnswersAServerMadeReload() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let reply = try await client.post("/v1/sessions/s1/steps", [
            ["lifecycle": ["type": "webContentTerminated"]],  // a recovery reload with a server-made id
            ["webEvent": ["type": "webView.loadingPresentation", "owner": "web"]],
            ["webEvent": ["type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": 40,
                          "requestId": ["$ref": "document.requestId"]]],
            ["webEvent": ["type": "todayPage.refreshResult", "schemaVersion": 1, "mode": "hard", "status": "succeeded",
                          "requestId": ["$ref": "document.requestId"]]],
            ["clock": ["advanceMs": 1000]],
        ])
        #expect(reply.status == 200, "\(reply.text)")
        guard case let .array(results)? = reply["results"] else { Issue.record("no results"); return }
        #expect(results.count == 5)
        #expect(results.map { $0["outcome"] } == ["applied", "applied", "applied", "applied", "applied"])
        #expect(results.map { $0["session"]?["version"] } == [2, 3, 4, 5, 6])
        let session = try #require(reply["session"])
        #expect(session["version"] == 6)
        #expect(session["document"]?["awaitingResult"] == false, "the $ref answered the reload's own id")
        #expect(session["counts"]?["violations"] == 0)
        #expect(session == results.last?["session"])
        #expect(session == (try await client.get("/v1/sessions/s1")).json)
    }

    @Test func aFailingStepLeavesNothingBehind() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let before = try await client.get("/v1/sessions/s1")
        let timeline = try await client.timeline("s1")

        let reused = try await client.post("/v1/sessions/s1/steps", [
            ["lifecycle": ["type": "background"]],
            ["clock": ["advanceMs": 6000]],
            ["lifecycle": ["type": "foreground", "requestId": "p1"]],  // p1 was already used (H4)
        ])
        expectProblem(reused, 400, "invalid_field", field: "requestId")
        #expect(reused["detail"]?.stringValue?.hasPrefix("step 2: ") == true, "\(reused.text)")

        let unresolved = try await client.post("/v1/sessions/s1/steps", [
            ["lifecycle": ["type": "tabActivated"]],
            ["webEvent": ["type": "todayPage.refreshResult", "schemaVersion": 1, "mode": "hard", "status": "succeeded",
                          "requestId": ["$ref": "document.requestId"]]],  // the initial load carries no id
        ])
        expectProblem(unresolved, 400, "invalid_field", field: "$ref")
        #expect(unresolved["detail"]?.stringValue?.hasPrefix("step 1: ") == true)

        // A batch of one is still a batch: its refusal names step 0, whether the step does not
        // decode or the session refuses it.
        let undecodable = try await client.post("/v1/sessions/s1/steps", [["clock": ["advanceMs": -1]]])
        expectProblem(undecodable, 400, "invalid_field", field: "advanceMs")
        #expect(undecodable["detail"]?.stringValue?.hasPrefix("step 0: ") == true, "\(undecodable.text)")
        let refused = try await client.post("/v1/sessions/s1/steps", [["lifecycle": ["type": "tabActivated", "requestId": "p1"]]])
        expectProblem(refused, 400, "invalid_field", field: "requestId")
        #expect(refused["detail"]?.stringValue?.hasPrefix("step 0: ") == true, "\(refused.text)")

        #expect((try await client.get("/v1/sessions/s1")).json == before.json)
        #expect(try await client.timeline("s1") == timeline)
    }

    @Test func malformedBatchesAreRefusedBeforeAnything() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        expectProblem(try await client.post("/v1/sessions/s1/steps", raw: #"{"gesture":{"type":"pull"}}"#), 400, "invalid_json")
        expectProblem(try await client.post("/v1/sessions/s1/steps", raw: "[]"), 400, "invalid_field", field: "steps")
        expectProblem(try await client.post("/v1/sessions/s1/steps", [["gesture": ["type": "pull"], "clock": ["advanceMs": 1]]]),
                      400, "invalid_field", field: "steps[0]")
        expectProblem(try await client.post("/v1/sessions/s1/steps", [["gesture": ["type": "pull"]], ["dance": [:]]]),
                      400, "invalid_field", field: "steps[1]")
        expectProblem(try await client.post("/v1/sessions/nobody/steps", [["gesture": ["type": "pull"]]]), 404, "session_not_found")
        #expect((try await client.get("/v1/sessions/s1"))["version"] == 1)
    }

    @Test func ifMatchGuardsTheWholeBatch() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let body = Array(#"[{"gesture":{"type":"pull"}},{"clock":{"advanceMs":100}}]"#.utf8)
        expectProblem(try await client.send("POST", "/v1/sessions/s1/steps", body: body, headers: ["If-Match": "7"]),
                      412, "precondition_failed")
        let applied = try await client.send("POST", "/v1/sessions/s1/steps", body: body, headers: ["If-Match": "1"])
        #expect(applied.status == 200)
        #expect(applied["session"]?["version"] == 3)
    }
}

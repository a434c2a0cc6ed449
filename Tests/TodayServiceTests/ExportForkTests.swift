import Foundation
import Testing
import TodayHost

/// `export` replays a session exactly; `fork` branches one.
@Suite struct ExportForkTests {
    @Test func anExportReplaysIntoAnIdenticalSession() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1", "label": "suite", "route": "/embed/feeds/v1/edit",
                                 "timing": ["softRefreshDeadlineMs": 3000], "analytics": ["did": "d1"]])
        let script: [(String, JSON)] = [
            ("gestures", ["type": "pull"]),  // a server-made request id
            ("web-events", ["type": "nativeDialog.present", "title": "Delete?", "actions": [["actionId": "delete", "title": "Delete"]]]),
            ("gestures", ["type": "dialog.choose", "actionId": "delete"]),
            ("clock", ["advanceMs": 3000]),  // deadline: a recovery reload with a server-made id
            ("web-events", ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "nobody", "mode": "soft", "status": "failed"]),
            ("commands", ["type": "todayPage.scrollToSection", "batchId": "b2"]),
            ("lifecycle", ["type": "accountSwitch", "uid": "u2"]),
        ]
        for (endpoint, body) in script {
            #expect(try await client.post("/v1/sessions/s1/\(endpoint)", body).status == 200)
        }
        _ = try await client.delete("/v1/sessions/s1")
        let original = try await client.timeline("s1")
        let view = try await client.get("/v1/sessions/s1")

        let export = try await client.get("/v1/sessions/s1/export")
        #expect(export.status == 200)
        #expect(export["closed"] == true)
        guard case let .array(steps)? = export["steps"] else { Issue.record("no steps"); return }
        #expect(steps.count == script.count)

        #expect(try await client.post("/v1/reset", raw: "").json == ["deleted": 1])
        #expect(try await client.post("/v1/sessions", export["create"] ?? .null).status == 201)
        #expect(try await client.post("/v1/sessions/s1/steps", .array(steps)).status == 200)
        _ = try await client.delete("/v1/sessions/s1")
        #expect(try await client.timeline("s1") == original, "same ids, same timeline")
        #expect((try await client.get("/v1/sessions/s1")).json == view.json)
    }

    /// Issue 12, item 10: an export is paged (a long one once answered 7.8 MB in one piece and
    /// could not be posted back under the 1 MiB body limit); its pages replay one `/steps`
    /// batch each, and a batch is at most 1,000 steps.
    @Test func aLongSessionExportsInPagesThatReplayBatchByBatch() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "long"])
        let step: JSON = ["clock": ["advanceMs": 1]]
        let tooMany = try await client.post("/v1/sessions/long/steps", .array(Array(repeating: step, count: 1001)))
        expectProblem(tooMany, 400, "invalid_field", field: "steps")
        // Each tab activation adds a pending request to the view every step's result carries:
        // 1,000 of them would answer ~40 MB (the answer grows with the square of the steps).
        let heavy = try await client.post("/v1/sessions/long/steps",
                                          .array(Array(repeating: ["lifecycle": ["type": "tabActivated"]], count: 1000)))
        expectProblem(heavy, 400, "invalid_field", field: "steps")
        #expect(heavy["detail"]?.stringValue?.contains("answer would pass 8 MiB") == true, "\(heavy.text)")
        #expect((try await client.get("/v1/sessions/long"))["version"] == 1, "nothing applied")
        for _ in 0..<2 {
            #expect(try await client.post("/v1/sessions/long/steps", .array(Array(repeating: step, count: 1000))).status == 200)
        }
        #expect(try await client.post("/v1/sessions/long/steps", .array(Array(repeating: step, count: 500))).status == 200)
        _ = try await client.delete("/v1/sessions/long")  // teardown (H20)
        let original = try await client.timeline("long")
        let view = try await client.get("/v1/sessions/long")

        var pages: [Client.Reply] = []
        var after = 0
        while true {
            let page = try await client.get("/v1/sessions/long/export?after=\(after)")
            #expect(page.status == 200)
            pages.append(page)
            guard page["more"] == true, case let .int(next)? = page["next"] else { break }
            after = Int(next)
        }
        let stepCounts = pages.map { page -> Int in
            if case let .array(steps)? = page["steps"] { return steps.count }
            return -1
        }
        // A page is 1,000 input entries: the first holds the creation besides 999 steps.
        #expect(stepCounts == [999, 1000, 501], "\(stepCounts)")
        #expect(pages.allSatisfy { $0["create"] == pages[0]["create"] }, "every page says how to create the session")
        #expect(pages.map { $0["closed"] == true } == pages.indices.map { $0 == pages.count - 1 }, "the teardown is on the last page")

        #expect(try await client.post("/v1/reset", raw: "").json == ["deleted": 1])
        #expect(try await client.post("/v1/sessions", pages[0]["create"] ?? .null).status == 201)
        for page in pages {
            guard case let .array(steps)? = page["steps"], !steps.isEmpty else { continue }
            #expect(try await client.post("/v1/sessions/long/steps", .array(steps)).status == 200)
        }
        _ = try await client.delete("/v1/sessions/long")
        #expect(try await client.timeline("long") == original, "same timeline")
        #expect((try await client.get("/v1/sessions/long")).json == view.json)
    }

    @Test func aForkBranchesAScenario() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "base"])
        _ = try await client.post("/v1/sessions/base/gestures", ["type": "pull", "requestId": "p1"])
        let fork = try await client.post("/v1/sessions/base/fork", ["id": "branch"])
        #expect(fork.status == 201)
        #expect(fork.header("Location") == "/v1/sessions/branch")
        #expect(fork["id"] == "branch")
        #expect(fork["version"] == 2)
        #expect(fork["pull"]?["requestId"] == "p1")
        #expect(try await client.timeline("branch") == (try await client.timeline("base")))

        // The two go separate ways.
        _ = try await client.post("/v1/sessions/base/web-events", [
            "type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "p1", "mode": "soft", "status": "succeeded"])
        _ = try await client.post("/v1/sessions/branch/clock", ["advanceMs": 5000])
        #expect((try await client.get("/v1/sessions/base"))["pull"]?["lastOutcome"] == "succeeded")
        let branch = try await client.get("/v1/sessions/branch")
        #expect(branch["document"]?["cause"] == "recovery")
        #expect((try await client.get("/v1/sessions/branch/report"))["violations"].map { violationCodes($0) } == ["M7"])
        // The fork's ledger came along: p1 is already used there too.
        expectProblem(try await client.post("/v1/sessions/branch/gestures", ["type": "pull", "requestId": "p1"]),
                      400, "invalid_field", field: "requestId")

        expectProblem(try await client.post("/v1/sessions/base/fork", ["id": "branch"]), 409, "session_exists")
        expectProblem(try await client.post("/v1/sessions/nobody/fork", raw: ""), 404, "session_not_found")
        let unnamed = try await client.post("/v1/sessions/base/fork", raw: "")
        #expect(unnamed.status == 201)
        #expect(unnamed["id"]?.stringValue?.count == 36)
    }
}

import Foundation
import Testing
import TodayHost
import TodayStore
import TodayTestSupport

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
        try await client.tearDown("s1")
        let original = try await client.timeline("s1")
        let view = try await client.get("/v1/sessions/s1")

        let export = try await client.get("/v1/sessions/s1/export")
        #expect(export.status == 200)
        #expect(export["closed"] == true)
        guard case let .array(steps)? = export["steps"] else { Issue.record("no steps"); return }
        #expect(steps.count == script.count + 1)
        #expect(steps.last == ["lifecycle": ["type": "teardown"]], "the teardown replays as the input it was")

        #expect(try await client.post("/v1/reset", raw: "").json == ["deleted": 1])
        #expect(try await client.post("/v1/sessions", export["create"] ?? .null).status == 201)
        #expect(try await client.post("/v1/sessions/s1/steps", .array(steps)).status == 200)
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
            #expect(try await client.post("/v1/sessions/long/steps", .array(Array(repeating: step, count: 100))).status == 200)
        }
        #expect(try await client.post("/v1/sessions/long/steps", .array(Array(repeating: step, count: 50))).status == 200)
        try await client.tearDown("long")
        let original = try await client.timeline("long")
        let view = try await client.get("/v1/sessions/long")

        var pages: [Client.Reply] = []
        var after = 0
        while true {
            let page = try await client.get("/v1/sessions/long/export?after=\(after)&limit=100")
            #expect(page.status == 200)
            pages.append(page)
            guard page["more"] == true, case let .int(next)? = page["next"] else { break }
            after = Int(next)
        }
        let stepCounts = pages.map { page -> Int in
            if case let .array(steps)? = page["steps"] { return steps.count }
            return -1
        }
        // A page is `limit` input entries (1,000 by default): the first holds the creation too.
        #expect(stepCounts == [99, 100, 52], "\(stepCounts)")
        let defaultPage = try await client.get("/v1/sessions/long/export")
        #expect(defaultPage["more"] == false, "250 inputs fit the default page of 1,000")
        #expect(pages.allSatisfy { $0["create"] == pages[0]["create"] }, "every page says how to create the session")
        #expect(pages.map { $0["closed"] == true } == pages.indices.map { $0 == pages.count - 1 }, "the teardown is on the last page")

        #expect(try await client.post("/v1/reset", raw: "").json == ["deleted": 1])
        #expect(try await client.post("/v1/sessions", pages[0]["create"] ?? .null).status == 201)
        for page in pages {
            guard case let .array(steps)? = page["steps"], !steps.isEmpty else { continue }
            #expect(try await client.post("/v1/sessions/long/steps", .array(steps)).status == 200)
        }
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

/// Issue 12, item 10: removing or forking a long session runs in short transactions; what is
/// being removed is gone from every read at once and its rows follow.
@Suite struct LongWritesTests {
    /// The servers here move 100 rows per transaction, so a few hundred entries take several.
    static let chunkRows = 100

    /// A session with `batches × 100` clock inputs (a timeline of as many entries, and more).
    func longSession(_ client: Client, _ id: String, batches: Int) async throws {
        try await client.create(["uid": "u1", "id": .string(id), "label": "long"])
        let step: JSON = ["clock": ["advanceMs": 1]]
        for _ in 0..<batches {
            #expect(try await client.post("/v1/sessions/\(id)/steps", .array(Array(repeating: step, count: 100))).status == 200)
        }
    }

    /// Rows left of the session stored under `ord`, in every table.
    func rows(_ server: TestServer, ord: Int64) throws -> Int64 {
        let database = try Database(path: server.databasePath)
        return try ["timeline", "violations", "requests"].reduce(0) { total, table in
            total + (try database.integer("SELECT count(*) FROM \(table) WHERE session = \(ord)"))
        } + (try database.integer("SELECT count(*) FROM sessions WHERE ord = \(ord)"))
    }

    @Test func aForkOfALongSessionCopiesItWholeInChunks() async throws {
        let server = try TestServer(chunkRows: Self.chunkRows)
        let client = Client(server: server)
        try await longSession(client, "base", batches: 5)
        let fork = try await client.post("/v1/sessions/base/fork", ["id": "copy"])
        #expect(fork.status == 201)
        #expect(try await client.timeline("copy") == (try await client.timeline("base")))
        #expect((try await client.get("/v1/sessions/copy"))["version"] == 501)
        expectProblem(try await client.post("/v1/sessions/base/fork", ["id": "copy"]), 409, "session_exists")
        #expect((try await client.get("/v1/sessions?label=long"))["sessions"].map { sessions -> Int in
            if case let .array(items) = sessions { return items.count }
            return -1
        } == 2)
    }

    @Test(.sqliteOnly) func aResetHidesAtOnceAndTheRowsFollow() async throws {
        let server = try TestServer(chunkRows: Self.chunkRows)
        let client = Client(server: server)
        try await longSession(client, "doomed", batches: 5)
        let ord = try Database(path: server.databasePath).integer("SELECT ord FROM sessions WHERE id = 'doomed'")
        #expect(try rows(server, ord: ord) > 500)
        // Another label's session stays.
        try await client.create(["uid": "u3", "id": "kept", "label": "other"])
        #expect(try await client.send("DELETE", "/v1/sessions?label=long").json == ["deleted": 1])
        expectProblem(try await client.get("/v1/sessions/doomed"), 404, "session_not_found")
        #expect((try await client.get("/v1/sessions?label=long"))["sessions"] == [])
        #expect((try await client.get("/metrics")).text.contains("todaysim_sessions{status=\"active\"} 1"))
        // The id is free at once, while the old rows are still being deleted.
        #expect(try await client.create(["uid": "u2", "id": "doomed"])["version"] == 1)
        #expect((try await client.get("/v1/sessions/doomed"))["uid"] == "u2")
        #expect(try await eventually { try rows(server, ord: ord) == 0 }, "every row of the removed session is deleted")
        #expect(try Database(path: server.databasePath).integer("SELECT count(*) FROM sessions") == 2)
    }

    /// A crash between the hiding and the last chunk, or in the middle of a fork: the next
    /// start finishes the removal and removes the half-made copy.
    @Test(.sqliteOnly) func aRestartFinishesRemovalsAndDropsHalfMadeForks() async throws {
        let server = try TestServer(chunkRows: Self.chunkRows)
        let client = Client(server: server)
        try await longSession(client, "interrupted", batches: 3)
        try await longSession(client, "half-forked", batches: 3)
        try await client.create(["uid": "u3", "id": "kept"])
        server.stop()
        let database = try Database(path: server.databasePath)
        let removing = try database.integer("SELECT ord FROM sessions WHERE id = 'interrupted'")
        let forking = try database.integer("SELECT ord FROM sessions WHERE id = 'half-forked'")
        try database.execute("UPDATE sessions SET closed = 2, id = 'removing/' || ord WHERE ord = \(removing)")
        try database.execute("UPDATE sessions SET closed = 2, id = 'forking/f1' WHERE ord = \(forking)")
        try server.start()
        #expect(try await eventually { try rows(server, ord: removing) == 0 })
        #expect(try await eventually { try rows(server, ord: forking) == 0 })
        #expect((try await Client(server: server).get("/v1/sessions/kept")).status == 200)
    }
}

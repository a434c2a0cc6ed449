import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// `--token`: nothing but health and preflights without it; the token never reaches the log.
@Suite struct AccessTests {
    @Test func aTokenGuardsEveryEndpointButHealth() async throws {
        let server = try TestServer(token: "s3cret-token")
        let client = Client(server: server)
        #expect(try await client.get("/healthz").status == 200)
        // The rules are documentation, not session data: the dashboard's rule links open as they are.
        #expect(try await client.get("/rules").status == 200)
        #expect(try await client.get("/rules.md").status == 200)

        let refused = try await client.post("/v1/sessions", ["uid": "u1", "id": "s1"])
        expectProblem(refused, 401, "unauthorized")
        #expect(refused.header("WWW-Authenticate") == "Bearer realm=\"todaysim\"")
        expectProblem(try await client.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer wrong"]), 401, "unauthorized")
        expectProblem(try await client.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer s3cret-token-and-more"]),
                      401, "unauthorized")
        expectProblem(try await client.get("/metrics"), 401, "unauthorized")
        expectProblem(try await client.get("/"), 401, "unauthorized")
        expectProblem(try await client.get("/no/such/path"), 401, "unauthorized", field: nil)

        let created = try await client.send("POST", "/v1/sessions", body: Array(#"{"uid":"u1","id":"s1"}"#.utf8),
                                            headers: ["Authorization": "Bearer s3cret-token"])
        #expect(created.status == 201)
        // Browsers that cannot set a header (EventSource, a page load) pass it in the query.
        #expect(try await client.get("/v1/sessions/s1?access_token=s3cret-token").status == 200)
        #expect(try await client.get("/?access_token=s3cret-token").status == 200)
        #expect(try await client.send("OPTIONS", "/v1/sessions").status != 401, "CORS preflights need no token")

        for line in server.logLines.all {
            #expect(!line.contains("s3cret"), "\(line)")
        }
    }

    @Test func withoutATokenNothingIsAsked() async throws {
        let server = try TestServer()
        #expect(try await Client(server: server).get("/v1/sessions").status == 200)
    }

    /// `--token-file`: a label-bound token sees and changes only its label's sessions; every
    /// other session answers `404` exactly like a session that does not exist (never `403`).
    @Test func aLabelTokenSeesOnlyItsLabel() async throws {
        let server = try TestServer(token: "admin", labelTokens: [("token-a", "team-a"), ("token-b", "team-b")])
        let anonymous = Client(server: server)
        func send(_ token: String, _ method: String, _ path: String, _ body: String? = nil) async throws -> Client.Reply {
            try await anonymous.send(method, path, body: body.map { Array($0.utf8) }, headers: ["Authorization": "Bearer \(token)"])
        }
        let created = try await send("token-a", "POST", "/v1/sessions", #"{"uid":"u1","id":"sa"}"#)
        #expect(created.status == 201)
        #expect(created["label"] == "team-a", "a label-bound token's sessions get its label")
        expectProblem(try await send("token-a", "POST", "/v1/sessions", #"{"uid":"u1","id":"sx","label":"team-b"}"#),
                      400, "invalid_field", field: "label")
        #expect(try await send("token-b", "POST", "/v1/sessions", #"{"uid":"u1","id":"sb","label":"team-b"}"#).status == 201)
        #expect(try await send("admin", "POST", "/v1/sessions", #"{"uid":"u1","id":"sn"}"#).status == 201)
        let pull = #"{"type":"pull","requestId":"p1"}"#
        #expect(try await send("token-b", "POST", "/v1/sessions/sb/gestures", pull).status == 200)
        #expect(try await send("token-b", "POST", "/v1/sessions/sb/clock", #"{"advanceMs":5000}"#).status == 200)  // M7 p1
        #expect(try await send("token-a", "POST", "/v1/sessions/sa/gestures", pull).status == 200)
        #expect(try await send("token-a", "POST", "/v1/sessions/sa/clock", #"{"advanceMs":5000}"#).status == 200)  // M7 p1
        let versionOfB = try await send("admin", "GET", "/v1/sessions/sb")["version"]

        // Another label's session reads exactly like one that does not exist.
        let missing = try await send("token-a", "GET", "/v1/sessions/nobody")
        let foreign = try await send("token-a", "GET", "/v1/sessions/sb")
        expectProblem(foreign, 404, "session_not_found")
        #expect(foreign["detail"]?.stringValue == missing["detail"]?.stringValue.map { $0.replacingOccurrences(of: "nobody", with: "sb") })
        for (method, path, body) in [
            ("GET", "/v1/sessions/sb/timeline", nil), ("GET", "/v1/sessions/sb/watchdogs", nil),
            ("GET", "/v1/sessions/sb/report", nil), ("GET", "/v1/sessions/sb/export", nil),
            ("POST", "/v1/sessions/sb/gestures", pull),
            ("POST", "/v1/sessions/sb/lifecycle", #"{"type":"background"}"#),
            ("POST", "/v1/sessions/sb/web-events", #"{"type":"todayPage.track"}"#),
            ("POST", "/v1/sessions/sb/commands", #"{"type":"todayPage.scrollToSection"}"#),
            ("POST", "/v1/sessions/sb/clock", #"{"advanceMs":1}"#),
            ("POST", "/v1/sessions/sb/steps", #"{"steps":[{"type":"clock","advanceMs":1}]}"#),
            ("POST", "/v1/sessions/sb/fork", #"{"id":"stolen"}"#), ("DELETE", "/v1/sessions/sb", nil),
        ] as [(String, String, String?)] {
            let reply = try await send("token-a", method, path, body)
            #expect(reply.status == 404 && reply["code"] == "session_not_found", "\(method) \(path): \(reply.text)")
        }
        // (A stream would never end, so it is read with a bounded curl: it must not open.)
        let foreignListener = try EventStreamTests.Listener(server, "/v1/sessions/sb/events?access_token=token-a")
        let foreignStream = await foreignListener.finish()
        #expect(foreignStream.comments.isEmpty && foreignStream.events.isEmpty, "another label's stream does not open")
        #expect(foreignListener.endedCleanly, "refused at once, not cut at the deadline")

        func ids(_ reply: Client.Reply) -> [String] { TodayServiceTests.ids(in: reply["sessions"] ?? .null) }
        func violators(_ reply: Client.Reply) -> [String] {
            guard case let .array(items)? = reply["violations"] else { return [] }
            return items.compactMap { $0["sessionId"]?.stringValue }
        }
        #expect(ids(try await send("token-a", "GET", "/v1/sessions")) == ["sa"])
        #expect(ids(try await send("token-a", "GET", "/v1/sessions?label=team-b")) == [])
        #expect(ids(try await send("admin", "GET", "/v1/sessions")) == ["sa", "sb", "sn"])
        let violations = try await send("token-a", "GET", "/v1/violations")
        #expect(violators(violations) == ["sa"])
        #expect(violators(try await send("admin", "GET", "/v1/violations")) == ["sb", "sa"])

        // Purges reach only the token's own label.
        #expect(try await send("token-a", "DELETE", "/v1/sessions?label=team-b")["deleted"] == 0)
        #expect(try await send("token-a", "POST", "/v1/reset")["deleted"] == 1)
        #expect(ids(try await send("admin", "GET", "/v1/sessions")) == ["sb", "sn"])
        #expect(try await send("admin", "GET", "/v1/sessions/sb")["version"] == versionOfB, "nothing token-a sent changed sb")
        expectProblem(try await send("token-c", "GET", "/v1/sessions"), 401, "unauthorized")
    }

    /// The account stream of a label-bound token carries only its label's sessions.
    @Test func aLabelTokensAccountStreamSkipsOtherLabels() async throws {
        let server = try TestServer(labelTokens: [("token-a", "team-a"), ("token-b", "team-b")])
        let client = Client(server: server)
        func send(_ token: String, _ method: String, _ path: String, _ body: String) async throws -> Client.Reply {
            try await client.send(method, path, body: Array(body.utf8), headers: ["Authorization": "Bearer \(token)"])
        }
        #expect(try await send("token-a", "POST", "/v1/sessions", #"{"uid":"u1","id":"sa"}"#).status == 201)
        #expect(try await send("token-b", "POST", "/v1/sessions", #"{"uid":"u1","id":"sb"}"#).status == 201)
        let listener = try EventStreamTests.Listener(server, "/v1/events?uid=u1&access_token=token-a")
        #expect(await eventually { server.service!.streams.count >= 1 })
        #expect(try await send("token-b", "POST", "/v1/sessions/sb/lifecycle", #"{"type":"background"}"#).status == 200)
        #expect(try await send("token-a", "POST", "/v1/sessions/sa/lifecycle", #"{"type":"background"}"#).status == 200)
        // Read until sa's input arrives: sb's, sent first, would have come by then had it leaked.
        let events = await listener.until { events, _ in
            events.contains { $0.id.hasPrefix("sa/") && $0.data["type"] == "background" }
        }.events
        #expect(events.contains { $0.id.hasPrefix("sa/") && $0.data["type"] == "background" }, "\(events.map(\.id))")
        #expect(events.allSatisfy { $0.id.hasPrefix("sa/") }, "\(events.map(\.id))")
    }
}

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TodayHost

/// The contract monitor over HTTP (M1–M9): one session's report as JSON and as JUnit XML, and
/// violations across sessions (`MonitorEndpointTests+Violations`). Gesture and bridge inputs are in
/// `MonitorEndpointTests+Inputs`; shared helpers in `MonitorTestSupport`.
@Suite struct MonitorEndpointTests {
    // MARK: GET …/report

    @Test func aConformingWebGetsACleanReport() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "ok"])
        try await client.input("ok", "lifecycle", ["type": "background"])
        try await client.input("ok", "clock", ["advanceMs": 6000])
        let foreground = try await client.input("ok", "lifecycle", ["type": "foreground", "requestId": "fg-1"])
        #expect(foreground["session"]?["refresh"]?["pending"] == [["requestId": "fg-1", "reason": "app_foreground", "requestedAtMs": 6000]])
        try await client.input("ok", "web-events", ["type": "webView.loadingPresentation", "owner": "web"])
        try await client.input("ok", "web-events", ["type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": 40])
        try await client.input("ok", "web-events", [
            "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "fg-1", "presentation": "header",
        ])
        try await client.input("ok", "clock", ["advanceMs": 750])
        try await client.input("ok", "web-events", [
            "type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "fg-1", "mode": "soft", "status": "succeeded",
        ])
        try await client.input("ok", "clock", ["runUntilIdle": true])

        let report = try await client.get("/v1/sessions/ok/report")
        #expect(report.status == 200)
        #expect(report.header("Content-Type") == "application/json; charset=utf-8")
        #expect(report["sessionId"] == "ok")
        #expect(report["conforms"] == true)
        #expect(report["violations"] == [])
        let requests = items(report["requests"])
        let expected: [[String: JSON]] = [[
            "requestId": "fg-1", "kind": "soft", "reason": "app_foreground", "cause": nil,
            "requestedAtMs": 6000, "outcome": "succeeded", "answeredInMs": 750,
        ]]
        #expect(requests.map(members) == expected)
        #expect(try await client.get("/v1/sessions/ok/report?format=json").json == report.json, "json is the default format")
        let view = try await client.get("/v1/sessions/ok")
        #expect(view["counts"]?["violations"] == 0)
    }

    @Test func aMisbehavingWebGetsEachViolationInOrder() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "bad"])
        try await misbehave(client, "bad")

        // Before the tab request's deadline: M3 and M1, and the tab request still open.
        let early = try await client.get("/v1/sessions/bad/report")
        #expect(early["conforms"] == false)
        #expect(violationCodes(early["violations"]) == ["M3", "M1"])
        #expect(items(early["requests"]).map { $0["requestId"] } == ["p-1", "t-1"])
        #expect(items(early["requests"]).map { $0["outcome"] ?? "absent" } == ["succeeded", .null])

        let expired = try await client.input("bad", "clock", ["advanceMs": 5000])
        let reloadId = try #require(expired["session"]?["document"]?["requestId"]?.stringValue, "the expiry reloads (budget armed)")
        #expect(expired["session"]?["document"]?["cause"] == "recovery")

        let report = try await client.get("/v1/sessions/bad/report")
        #expect(report["conforms"] == false)
        let violations = items(report["violations"])
        #expect(violationCodes(report["violations"]) == ["M3", "M1", "M7"])
        #expect(violations.map { $0["requestId"] } == ["p-1", "p-1", "t-1"])
        for violation in violations {
            #expect(violation["kind"] == "violation")
            #expect(violation["type"] == violation["data"]?["code"])
            let code = violation["data"]?["code"]?.stringValue ?? "?"
            #expect(violation["data"]?["detail"]?.stringValue?.hasPrefix(code) == true, "\(violation)")
        }
        #expect(violations[1]["data"]?["detail"]?.stringValue?.contains("p-1") == true)
        #expect(violations.map { $0["atMs"] } == [0, 1500, 6500])
        let timelineViolations = try await client.timeline("bad").filter { $0["kind"] == "violation" }
        #expect(timelineViolations == violations, "the report's violations are the timeline's entries")

        let expected: [[String: JSON]] = [
            ["requestId": "p-1", "kind": "soft", "reason": "user_pull", "cause": nil,
             "requestedAtMs": 0, "outcome": "succeeded", "answeredInMs": 1000],
            ["requestId": "t-1", "kind": "soft", "reason": "tab_activated", "cause": nil,
             "requestedAtMs": 1500, "outcome": "timedOut", "answeredInMs": nil],
            ["requestId": .string(reloadId), "kind": "reload", "reason": nil, "cause": "recovery",
             "requestedAtMs": 6500, "outcome": nil, "answeredInMs": nil],
        ]
        #expect(items(report["requests"]).map(members) == expected)
        let view = try await client.get("/v1/sessions/bad")
        #expect(view["counts"]?["violations"] == 3)
    }

    // MARK: ?format=junit

    @Test func junitHasACasePerRequestAndRuleAndAFailurePerViolation() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "bad"])
        try await misbehave(client, "bad")
        try await client.input("bad", "clock", ["advanceMs": 5000])
        let violations = items(try await client.get("/v1/sessions/bad/report")["violations"])

        let reply = try await client.get("/v1/sessions/bad/report?format=junit")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("application/xml") == true, "\(reply.headers)")
        let root = try parseXML(reply.bytes)
        #expect(root.name == "testsuites")
        #expect(root.attributes["tests"] == "12", "3 requests + 9 rules")
        #expect(root.attributes["failures"] == "5", "p-1, t-1, M1, M3, M7")
        let suite = try #require(root.children.first)
        #expect(root.children.count == 1 && suite.name == "testsuite")
        #expect(suite.attributes["tests"] == "12")
        #expect(suite.attributes["failures"] == "5")
        let cases = suite.children
        #expect(cases.allSatisfy { $0.name == "testcase" })
        let requestCases = cases.filter { $0.attributes["classname"]?.hasSuffix(".requests") == true }
        let ruleCases = cases.filter { $0.attributes["classname"]?.hasSuffix(".rules") == true }
        #expect(requestCases.count == 3)
        #expect(ruleCases.count == 9)
        #expect(ruleCases.map { String(($0.attributes["name"] ?? "").prefix(3)) } == (1...9).map { "M\($0):" })
        #expect(requestCases.map { $0.attributes["name"]?.contains("p-1") == true } == [true, false, false])
        #expect(requestCases[1].attributes["name"]?.contains("t-1") == true)

        // The rule cases hold exactly one failure per violation, `type` = its code, text = its detail.
        let ruleFailures = ruleCases.flatMap { $0.children.filter { $0.name == "failure" } }
        #expect(ruleFailures.count == violations.count)
        #expect(ruleFailures.map { $0.attributes["type"] ?? "" } == ["M1", "M3", "M7"])
        for failure in ruleFailures {
            let violation = violations.first { $0["data"]?["code"]?.stringValue == failure.attributes["type"] }
            #expect(failure.text == violation?["data"]?["detail"]?.stringValue)
        }
        for ruleCase in ruleCases {
            let code = String((ruleCase.attributes["name"] ?? "").prefix(2))
            let expected = violations.filter { $0["data"]?["code"]?.stringValue == code }.count
            #expect(ruleCase.children.filter { $0.name == "failure" }.count == expected, "\(code)")
        }
        // A request's case fails with the violations that name it.
        #expect(requestCases.map { $0.children.map { $0.attributes["type"] ?? "" } } == [["M3", "M1"], ["M7"], []])
    }

    @Test func junitOfAConformingSessionHasNoFailures() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "quiet"])
        let root = try parseXML(try await client.get("/v1/sessions/quiet/report?format=junit").bytes)
        #expect(root.attributes["tests"] == "9", "no native request: only the rules")
        #expect(root.attributes["failures"] == "0")
        #expect(root.children.first?.children.count == 9)
        #expect(root.children.first?.children.allSatisfy { $0.children.isEmpty } == true)
    }

    @Test func junitEscapesWhatWebSent() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "esc"])
        let weird = #"r<&">'x"#
        let result: JSON = ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(weird), "mode": "soft", "status": "succeeded"]
        try await client.input("esc", "web-events", result)
        try await client.input("esc", "web-events", result)
        let report = try await client.get("/v1/sessions/esc/report")
        #expect(violationCodes(report["violations"]) == ["M1"])
        let detail = try #require(items(report["violations"]).first?["data"]?["detail"]?.stringValue)
        #expect(detail.contains(weird))
        #expect(report["requests"] == [], "a Web-minted id is not a native request")

        let reply = try await client.get("/v1/sessions/esc/report?format=junit")
        let root = try parseXML(reply.bytes)
        #expect(root.attributes["failures"] == "1")
        let failures = (root.children.first?.children ?? []).flatMap { $0.children }
        #expect(failures.count == 1)
        #expect(failures.first?.attributes["type"] == "M1")
        #expect(failures.first?.text == detail, "the detail survives escaping")
    }

    /// Issue 13, item 5: the JUnit form under an operation of its own, for generated clients.
    @Test func junitRouteAnswersWhatFormatJunitAnswers() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "bad"])
        try await misbehave(client, "bad")
        let viaQuery = try await client.get("/v1/sessions/bad/report?format=junit")
        let viaRoute = try await client.get("/v1/sessions/bad/report/junit")
        #expect(viaRoute.status == 200)
        #expect(viaRoute.header("Content-Type") == viaQuery.header("Content-Type"))
        #expect(viaRoute.header("Content-Type")?.hasPrefix("application/xml") == true, "\(viaRoute.headers)")
        #expect(viaRoute.bytes == viaQuery.bytes)
        #expect(try parseXML(viaRoute.bytes).attributes["failures"] != "0")
        expectProblem(try await client.get("/v1/sessions/nobody/report/junit"), 404, "session_not_found")
        let post = try await client.post("/v1/sessions/bad/report/junit", [:])
        expectProblem(post, 405, "method_not_allowed")
    }

    @Test func reportFormatAndSessionErrors() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        expectProblem(try await client.get("/v1/sessions/s1/report?format=pdf"), 400, "invalid_field", field: "format")
        expectProblem(try await client.get("/v1/sessions/s1/report?format="), 400, "invalid_field", field: "format")
        expectProblem(try await client.get("/v1/sessions/nobody/report"), 404, "session_not_found")
        expectProblem(try await client.get("/v1/sessions/nobody/report?format=junit"), 404, "session_not_found")
        let post = try await client.post("/v1/sessions/s1/report", [:])
        expectProblem(post, 405, "method_not_allowed")
        #expect(post.header("Allow") == "GET, HEAD")
    }

    /// As for the timeline (`ErrorTests.notFoundMethodsAndSessions`: `nobody/timeline?limit=0`
    /// is 404), an unknown session comes before a bad query parameter.
    @Test func reportOfAnUnknownSessionIs404EvenWithABadFormat() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        expectProblem(try await client.get("/v1/sessions/nobody/timeline?limit=0"), 404, "session_not_found")
        expectProblem(try await client.get("/v1/sessions/nobody/report?format=pdf"), 404, "session_not_found")
    }

    // MARK: Helpers

    /// pull p-1 (t=0) → Web starts header feedback for it (M3) → answers it at 1000 → answers it
    /// again at 1500 (M1) → tab request t-1 at 1500, never answered (deadline 6500).
    private func misbehave(_ client: Client, _ id: String) async throws {
        try await client.input(id, "gestures", ["type": "pull", "requestId": "p-1"])
        let started = try await client.input(id, "web-events", [
            "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "p-1", "presentation": "header",
        ])
        #expect(started["outcome"] == "applied", "M3 flags Web; the host still shows the header")
        #expect(kinds(started["entries"]).contains("violation"))
        try await client.input(id, "clock", ["advanceMs": 1000])
        let result: JSON = ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "p-1", "mode": "soft", "status": "succeeded"]
        try await client.input(id, "web-events", result)
        try await client.input(id, "clock", ["advanceMs": 500])
        let second = try await client.input(id, "web-events", result)
        #expect(second["outcome"] == "ignored")
        #expect(second["reason"] == "staleResult")
        try await client.input(id, "lifecycle", ["type": "tabActivated", "requestId": "t-1"])
    }
}

import Foundation
import Testing
import TodayHost

/// Every error code of the contract, and that an input answered with an error changes nothing.
@Suite struct ErrorTests {
    @Test func creationErrors() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        expectProblem(try await client.post("/v1/sessions", raw: "{not json"), 400, "invalid_json")
        expectProblem(try await client.post("/v1/sessions", raw: "[1,2]"), 400, "invalid_json")
        expectProblem(try await client.post("/v1/sessions", raw: ""), 400, "invalid_json")
        expectProblem(try await client.post("/v1/sessions", ["id": "x"]), 400, "invalid_field", field: "uid")
        expectProblem(try await client.post("/v1/sessions", ["uid": ""]), 400, "invalid_field", field: "uid")
        expectProblem(try await client.post("/v1/sessions", ["uid": 5]), 400, "invalid_field", field: "uid")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "id": "-bad"]), 400, "invalid_field", field: "id")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "platform": "windows"]), 400, "invalid_field", field: "platform")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "route": "/embed/x"]), 400, "invalid_field", field: "route")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "clock": "sundial"]), 400, "invalid_field", field: "clock")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "loadingGate": "x"]), 400, "invalid_field", field: "loadingGate")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "capabilities": [1]]), 400, "invalid_field", field: "capabilities")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "timing": ["pullWatchdogMs": 0]]), 400, "invalid_field",
                      field: "timing.pullWatchdogMs")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "timing": ["headerSettleMs": .double(1.5)]]), 400, "invalid_field",
                      field: "timing.headerSettleMs")
        expectProblem(try await client.post("/v1/sessions", raw: #"{"uid":"u","ttlMs":9000000000000001}"#), 400, "invalid_field",
                      field: "ttlMs")
        expectProblem(try await client.post("/v1/sessions", raw: #"{"uid":"u","timing":{"pullWatchdogMs":9000000000000001}}"#),
                      400, "invalid_field", field: "timing.pullWatchdogMs")
        try await client.create(["uid": "u", "id": "s1"])
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "id": "s1"]), 409, "session_exists")
        let list = try await client.get("/v1/sessions")
        #expect(ids(in: list["sessions"] ?? .null) == ["s1"], "a refused creation made nothing")
    }

    @Test func inputErrorsChangeNothing() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let before = try await client.get("/v1/sessions/s1")
        let timelineBefore = try await client.timeline("s1")

        let cases: [(String, String, Int, String, String?)] = [
            ("gestures", #"{"type":"swipe"}"#, 400, "unknown_input", nil),
            ("gestures", #"{"requestId":"x"}"#, 400, "invalid_field", "type"),
            ("gestures", #"{"type":"pull","requestId":"p1"}"#, 400, "invalid_field", "requestId"),
            ("gestures", #"{"type":"pull","requestId":""}"#, 400, "invalid_field", "requestId"),
            ("gestures", #"{"type":"pull","requestId":7}"#, 400, "invalid_field", "requestId"),
            ("gestures", #"{"type":"dialog.choose"}"#, 400, "invalid_field", "actionId"),
            ("gestures", "nope", 400, "invalid_json", nil),
            ("lifecycle", #"{"type":"sleep"}"#, 400, "unknown_input", nil),
            ("lifecycle", #"{"type":"navigation","url":"https://example.com/"}"#, 400, "invalid_field", "url"),
            ("lifecycle", #"{"type":"accountSwitch"}"#, 400, "invalid_field", "uid"),
            ("lifecycle", #"{"type":"accountSwitch","uid":""}"#, 400, "invalid_field", "uid"),
            ("web-events", #"{"schemaVersion":1}"#, 400, "invalid_field", "type"),
            ("web-events", #"{"type":5}"#, 400, "invalid_field", "type"),
            ("web-events", #"["todayPage.refreshResult"]"#, 400, "invalid_json", nil),
            ("commands", #"{"type":"todayPage.scrollToSection","batchId":""}"#, 400, "invalid_field", "batchId"),
            ("commands", #"{"type":"todayPage.scrollToSection","batchId":"b","behavior":"instant"}"#, 400, "invalid_field", "behavior"),
            ("commands", #"{"type":"todayPage.explode"}"#, 400, "unknown_input", nil),
            ("clock", #"{"advanceMs":-1}"#, 400, "invalid_field", "advanceMs"),
            ("clock", #"{"toMs":-5}"#, 400, "invalid_field", "toMs"),
            ("clock", #"{"advanceMs":10,"toMs":20}"#, 400, "invalid_field", "toMs"),
            ("clock", #"{}"#, 400, "invalid_field", "body"),
            ("clock", #"{"advance":10}"#, 400, "invalid_field", "body"),
            ("clock", #"{"toNextTimer":false}"#, 400, "invalid_field", "toNextTimer"),
            ("clock", #"{"advanceMs":"5"}"#, 400, "invalid_field", "advanceMs"),
            ("clock", #"{"advanceMs":9000000000000001}"#, 400, "invalid_field", "advanceMs"),
            ("clock", #"{"toMs":9223372036854775807}"#, 400, "invalid_field", "toMs"),
        ]
        for (endpoint, body, status, code, field) in cases {
            expectProblem(try await client.post("/v1/sessions/s1/\(endpoint)", raw: body), status, code, field: field)
        }
        // A clock body without a move names the four moves, not one the caller never sent.
        #expect(try await client.post("/v1/sessions/s1/clock", raw: "{}")["detail"]
            == "body: give exactly one of advanceMs, toMs, toNextTimer, runUntilIdle; none was given")
        let after = try await client.get("/v1/sessions/s1")
        #expect(after.json == before.json)
        #expect(try await client.timeline("s1") == timelineBefore)
    }

    @Test func notFoundMethodsAndSessions() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        expectProblem(try await client.get("/v1/sessions/nobody"), 404, "session_not_found")
        expectProblem(try await client.post("/v1/sessions/nobody/gestures", ["type": "pull"]), 404, "session_not_found")
        expectProblem(try await client.post("/v1/sessions/nobody/gestures", raw: "garbage"), 404, "session_not_found")
        expectProblem(try await client.get("/v1/sessions/nobody/timeline"), 404, "session_not_found")
        expectProblem(try await client.get("/v1/sessions/nobody/timeline?limit=0"), 404, "session_not_found")
        expectProblem(try await client.delete("/v1/sessions/nobody"), 404, "session_not_found")
        expectProblem(try await client.get("/v2/everything"), 404, "not_found")
        let wrongMethod = try await client.send("PUT", "/v1/sessions")
        expectProblem(wrongMethod, 405, "method_not_allowed")
        #expect(wrongMethod.header("Allow") == "POST, GET, HEAD, DELETE")
        let patch = try await client.send("PATCH", "/v1/sessions/s1")
        #expect(patch.header("Allow") == "GET, HEAD, DELETE")
    }

    /// Issue 34: an unknown input type or path names what would have been right (the same
    /// did-you-mean as an unknown field), else lists the types; and the OpenAPI document's
    /// examples are exactly these answers.
    @Test func unknownValuesNameWhatWasMeant() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u", "id": "demo"])
        let timelineBefore = try await client.timeline("demo")
        let document = String(decoding: try RepositoryFiles.bytes("OpenAPI/todaysim.yaml"), as: UTF8.self)
        let cases: [(Client.Reply, Int, String, String)] = [
            (try await client.post("/v1/sessions/demo/gestures", ["type": "pul"]), 400, "unknown_input",
             #"unknown gesture type "pul"; did you mean pull?"#),
            (try await client.post("/v1/sessions/demo/gestures", ["type": "swipe"]), 400, "unknown_input",
             #"unknown gesture type "swipe"; the gesture types are pull, liveWidget.created, liveWidget.cancelled, chat.edit, chat.send, dialog.choose, dialog.dismiss"#),
            (try await client.post("/v1/sessions/demo/gesture", ["type": "pull"]), 404, "not_found",
             "no such path: /v1/sessions/demo/gesture; did you mean POST /v1/sessions/demo/gestures?"),
            (try await client.get("/v1/widgets"), 404, "not_found", "no such path: /v1/widgets"),
        ]
        for (reply, status, code, detail) in cases {
            expectProblem(reply, status, code)
            #expect(reply["detail"]?.stringValue == detail, "\(reply.text)")
            #expect(document.contains("detail: '\(detail)'"), "the OpenAPI document's example: \(detail)")
        }
        let more: [(Client.Reply, String)] = [
            (try await client.post("/v1/sessions/demo/lifecycle", ["type": "Background"]),
             #"unknown lifecycle type "Background"; did you mean background?"#),
            (try await client.post("/v1/sessions/demo/commands", ["type": "todayPage.scrollToSecton", "batchId": "b"]),
             #"unknown command type "todayPage.scrollToSecton"; did you mean todayPage.scrollToSection?"#),
            (try await client.post("/v1/sessions/demo/steps", raw: #"[{"gesture":{"type":"pul"}}]"#),
             #"step 0: unknown gesture type "pul"; did you mean pull?"#),
            (try await client.get("/sessions/demo"), "no such path: /sessions/demo; did you mean GET, DELETE /v1/sessions/demo?"),
            (try await client.get("/v1/sesions"), "no such path: /v1/sesions; did you mean POST, GET, DELETE /v1/sessions?"),
            (try await client.get("/v1/sessions/demo/timelines"), "no such path: /v1/sessions/demo/timelines; did you mean GET /v1/sessions/demo/timeline?"),
        ]
        for (reply, detail) in more {
            #expect(reply["detail"]?.stringValue == detail, "\(reply.text)")
        }
        #expect(try await client.timeline("demo") == timelineBefore, "a refused input changes nothing")
    }

    @Test func queryParameterErrors() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        for path in ["/v1/sessions?limit=0", "/v1/sessions?limit=1001", "/v1/sessions?limit=ten",
                     "/v1/sessions/s1/timeline?limit=0", "/v1/sessions/s1/timeline?after=-1",
                     "/v1/sessions/s1/timeline?kind=gossip", "/v1/sessions?status=sleeping", "/v1/sessions?after=abc",
                     "/v1/sessions/s1/timeline?after=9000000000000001", "/v1/sessions?after=9223372036854775807"] {
            let reply = try await client.get(path)
            #expect(reply.status == 400, "\(path)")
            #expect(reply["code"] == "invalid_field", "\(path)")
        }
    }

    @Test func wallSessionsRefuseClockInputs() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall"])
        expectProblem(try await client.post("/v1/sessions/w1/clock", ["advanceMs": 10]), 409, "clock_not_virtual")
    }

    /// A body announced past 1 MiB is refused from the head, before any of it is read (so the
    /// body is never sent: see `answer(toHead:)`).
    @Test func oversizedBodiesAre413() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let reply = try await client.answer(toHead: "POST /v1/sessions/s1/web-events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Content-Type: application/json\r\nContent-Length: \((1 << 20) + 10)\r\nExpect: 100-continue\r\n\r\n")
        expectProblem(reply, 413, "payload_too_large")
        let after = try await client.get("/v1/sessions/s1")
        #expect(after["version"] == 1)
    }

    /// Issue 7 (abuse): a body under a non-JSON `Content-Type` is `415` and changes nothing;
    /// the types ordinary JSON clients send (`curl -d`, a browser's `text/plain`) are read.
    @Test func wrongContentTypesAre415() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let pull = Array(#"{"type":"pull"}"#.utf8)
        for type in ["application/xml", "multipart/form-data; boundary=x", "text/html", "application/octet-stream",
                     "application/json; charset=iso-8859-1"] {
            let reply = try await client.send("POST", "/v1/sessions/s1/gestures", body: pull, headers: ["Content-Type": type])
            expectProblem(reply, 415, "unsupported_media_type")
        }
        #expect(try await client.get("/v1/sessions/s1")["version"] == 1, "no refused body was applied")
        var version = 1
        for type in ["application/json", "application/json; charset=UTF-8", "application/x-www-form-urlencoded",
                     "text/plain;charset=utf-8", "application/vnd.todaysim+json"] {
            let reply = try await client.send("POST", "/v1/sessions/s1/clock", body: Array(#"{"advanceMs":1}"#.utf8),
                                              headers: ["Content-Type": type])
            version += 1
            #expect(reply.status == 200, "\(type)")
            #expect(reply["session"]?["version"] == .int(version), "\(type)")
        }
    }

    @Test func lastEventIdHasTheCursorCeiling() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        for value in ["9000000000000001", "-1", "x"] {
            let reply = try await client.send("GET", "/v1/sessions/s1/events", headers: ["Last-Event-ID": value])
            expectProblem(reply, 400, "invalid_field", field: "Last-Event-ID")
        }
    }
}

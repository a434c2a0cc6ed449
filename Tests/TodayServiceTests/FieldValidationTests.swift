import Foundation
import Testing
import TodayHost

/// Issue 23, item 1 (API: Conventions, `fieldValidation`): an unknown field in a control-plane
/// body is warned about (`Warn`, the default), refused (`Strict`) or dropped (`Ignore`), never
/// silently lost; bridge messages keep H21 (ignored).
@Suite struct FieldValidationTests {
    /// Every control-plane body with one typo: the path it goes to, the body, the field named.
    static let typos: [(path: String, body: String, field: String, suggestion: String?)] = [
        ("/v1/sessions", #"{"uid":"u9","id":"n1","platfrom":"android"}"#, "platfrom", "platform"),
        ("/v1/sessions", #"{"uid":"u9","id":"n1","timing":{"pullWatchdogMS":5}}"#, "timing.pullWatchdogMS", "pullWatchdogMs"),
        ("/v1/sessions", #"{"uid":"u9","id":"n1","analytics":{"didd":"d","ctx":{"anything":1}}}"#, "analytics.didd", "did"),
        ("/v1/sessions/s1/gestures", #"{"type":"pull","requestID":"pull-2"}"#, "requestID", "requestId"),
        ("/v1/sessions/s1/lifecycle", #"{"type":"background","requestId":"r1"}"#, "requestId", nil),
        ("/v1/sessions/s1/commands", #"{"type":"todayPage.scrollToSection","batchId":"b1","behaviour":"instant"}"#, "behaviour", "behavior"),
        ("/v1/sessions/s1/clock", #"{"advanceMs":1000,"extra":1}"#, "extra", nil),
        ("/v1/sessions/s1/steps", #"[{"clock":{"advanceMs":1}},{"gesture":{"type":"pull","requestID":"p"}}]"#,
         "steps[1].gesture.requestID", "requestId"),
        ("/v1/sessions/s1/fork", #"{"id":"n1","idd":"x"}"#, "idd", "id"),
    ]

    static func version(_ client: Client) async throws -> JSON? {
        try await client.get("/v1/sessions/s1")["version"]
    }

    @Test func warnAppliesAsIfAbsentAndSaysSo() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        for (path, body, field, suggestion) in Self.typos {
            try await client.create(["uid": "u1", "id": "s1"])
            let reply = try await client.post(path, raw: body)
            #expect((200...201).contains(reply.status), "\(path): \(reply.text)")
            let warnings = try #require(reply["warnings"]?.arrayValue, "\(path): \(reply.text)")
            #expect(warnings.count == 1)
            #expect(warnings.first?["field"] == .string(field))
            let detail = warnings.first?["detail"]?.stringValue ?? ""
            #expect(detail.hasPrefix("unknown field; "), "\(detail)")
            if let suggestion { #expect(detail == "unknown field; did you mean \(suggestion)?") }
            #expect(reply.header("Warning") == "299 - \"\(field): \(detail)\"")
            #expect(reply["session"] != nil || reply["id"] != nil, "the answer is still the endpoint's")
            #expect(try await client.delete("/v1/sessions/s1").status == 204)
            _ = try await client.delete("/v1/sessions/n1")
        }
    }

    /// The issue's three sightings, applied as if the typo were absent.
    @Test func theTyposSeenAreAppliedWithoutTheField() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let created = try await client.post("/v1/sessions", raw: #"{"uid":"u1","id":"s1","platfrom":"android"}"#)
        #expect(created["platform"] == "ios", "platform was not given")
        let pull = try await client.post("/v1/sessions/s1/gestures", raw: #"{"type":"pull","requestID":"pull-2"}"#)
        #expect(pull["session"]?["pull"]?["requestId"] != "pull-2", "a server-made id, as the field was absent")
        let moved = try await client.post("/v1/sessions/s1/clock", raw: #"{"advanceMs":1000,"extra":1}"#)
        #expect(moved["session"]?["clock"]?["nowMs"] == 1000)
    }

    @Test func strictRefusesAndAppliesNothing() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        for (path, body, field, _) in Self.typos {
            let before = try await Self.version(client)
            let reply = try await client.post(path + "?fieldValidation=Strict", raw: body)
            expectProblem(reply, 400, "invalid_field", field: field)
            #expect(reply["detail"]?.stringValue?.contains("fieldValidation is Strict, so nothing was applied") == true)
            #expect(try await Self.version(client) == before, "\(path): nothing applied")
            #expect(try await client.get("/v1/sessions/n1").status == 404, "no session made")
        }
    }

    @Test func ignoreDropsThemSilently() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        for (path, body, _, _) in Self.typos {
            try await client.create(["uid": "u1", "id": "s1"])
            let reply = try await client.post(path + "?fieldValidation=ignore", raw: body)
            #expect((200...201).contains(reply.status), "\(path): \(reply.text)")
            #expect(reply["warnings"] == nil)
            #expect(reply.header("Warning") == nil)
            #expect(try await client.delete("/v1/sessions/s1").status == 204)
            _ = try await client.delete("/v1/sessions/n1")
        }
    }

    /// `--field-validation strict` is the server's default; a request's query overrides it, in
    /// any case; a mode that is none of the three is refused.
    @Test func theServersModeAndTheQueryOverridingIt() async throws {
        let server = try TestServer(fieldValidation: .strict)
        let client = Client(server: server)
        expectProblem(try await client.post("/v1/sessions", raw: #"{"uid":"u1","id":"s1","platfrom":"android"}"#), 400,
                      "invalid_field", field: "platfrom")
        let warned = try await client.post("/v1/sessions?fieldValidation=WARN", raw: #"{"uid":"u1","id":"s1","platfrom":"android"}"#)
        #expect(warned.status == 201)
        #expect(warned["warnings"]?.arrayValue?.count == 1)
        expectProblem(try await client.post("/v1/sessions/s1/clock?fieldValidation=loose", raw: #"{"advanceMs":1}"#), 400,
                      "invalid_field", field: "fieldValidation")
        #expect(try await client.post("/v1/sessions/s1/clock", raw: #"{"advanceMs":1}"#).status == 200, "no unknown field, no refusal")
    }

    /// Bridge messages are Web's own: unknown fields there are ignored in every mode (H21).
    @Test func bridgeMessagesKeepH21InEveryMode() async throws {
        let server = try TestServer(fieldValidation: .strict)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let event = #"{"type":"todayPage.loadingPresentation","schemaVersion":1,"state":"ready","somethingNew":true}"#
        let alone = try await client.post("/v1/sessions/s1/web-events?fieldValidation=Strict", raw: event)
        #expect(alone.status == 200, "\(alone.text)")
        #expect(alone["warnings"] == nil)
        let stepped = try await client.post("/v1/sessions/s1/steps", raw: #"[{"webEvent":"# + event + "}]")
        #expect(stepped.status == 200, "\(stepped.text)")
        #expect(stepped["warnings"] == nil)
    }

    /// A step is exactly one input key: a second key is `400` in every mode, not a warning.
    @Test(arguments: ["Warn", "Strict", "Ignore"])
    func aStepWithTwoKeysIsRefusedInEveryMode(_ mode: String) async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let reply = try await client.post("/v1/sessions/s1/steps?fieldValidation=\(mode)",
                                          raw: #"[{"clock":{"advanceMs":1},"note":"x"}]"#)
        expectProblem(reply, 400, "invalid_field", field: "steps[0]")
    }

    /// Many typos: one header each, and past 100 one more warning counts the rest.
    @Test func warningsAreCountedPastAHundred() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let three = try await client.post("/v1/sessions/s1/clock", raw: #"{"advanceMs":1,"a":1,"b":2,"c":3}"#)
        #expect(three["warnings"]?.arrayValue?.count == 3)
        #expect(three.header("Warning")?.components(separatedBy: "299 - \"").count == 4, "three headers: \(three.headers)")
        let many = (0..<150).map { "\"x\($0)\":1" }.joined(separator: ",")
        let reply = try await client.post("/v1/sessions/s1/clock", raw: #"{"advanceMs":1,"# + many + "}")
        let warnings = try #require(reply["warnings"]?.arrayValue)
        #expect(warnings.count == 101)
        #expect(warnings.last?["field"] == "body")
        #expect(warnings.last?["detail"] == "50 more unknown fields are not listed")
    }

    /// A field name a client chose cannot break the header: control characters and quotes
    /// are escaped or replaced, and the body keeps the name as sent.
    @Test func aHostileFieldNameStaysInItsHeader() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let reply = try await client.post("/v1/sessions/s1/clock", raw: #"{"advanceMs":1,"a\r\nSet-Cookie: x=\"1\"":1}"#)
        #expect(reply.status == 200)
        #expect(reply.header("Set-Cookie") == nil)
        #expect(reply.header("Warning") == #"299 - "a??Set-Cookie: x=\"1\": unknown field; this body takes advanceMs, toMs, toNextTimer, runUntilIdle""#)
        #expect(reply["warnings"]?.arrayValue?.first?["field"] == "a\r\nSet-Cookie: x=\"1\"")
    }

    /// A keyed retry answers the first answer again, warnings and their headers too; the mode is
    /// part of the request, so the same key under another mode is another request (`422`).
    @Test func aKeyedRetryCarriesItsWarningsAndTheModeIsInTheFingerprint() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let body = Array(#"{"type":"pull","requestID":"pull-2"}"#.utf8)
        let first = try await client.send("POST", "/v1/sessions/s1/gestures", body: body, headers: ["Idempotency-Key": "k1"])
        let retry = try await client.send("POST", "/v1/sessions/s1/gestures", body: body, headers: ["Idempotency-Key": "k1"])
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(retry.bytes == first.bytes)
        #expect(retry["warnings"]?.arrayValue?.count == 1)
        #expect(retry.header("Warning") == first.header("Warning"))
        #expect(first.header("Warning") != nil)
        let strict = try await client.send("POST", "/v1/sessions/s1/gestures?fieldValidation=Ignore", body: body,
                                           headers: ["Idempotency-Key": "k1"])
        expectProblem(strict, 422, "idempotency_conflict")
        #expect(try await Self.version(client) == 2, "applied once")
    }
}

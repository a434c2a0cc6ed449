import Foundation
import Testing
import TodayTestSupport
import TodayHost

/// Issue 12, item 9: every string a client gives is bounded (docs/LIMITS.md) and identifiers
/// hold no control characters. Each limit is tried at the boundary: exactly the limit is
/// accepted, one more is `400 invalid_field` naming the field and changes nothing.
@Suite struct FieldLimitTests {
    static let identifier = 256
    static let text = 4096
    static let maxItems = 32

    /// `count` characters; `é` (two UTF-8 bytes) shows that limits count characters, not bytes.
    static func string(_ count: Int, _ fill: Character = "a") -> String { "é" + String(repeating: fill, count: count - 1) }

    /// A refused creation stores nothing; the accepted one stores the whole value.
    static func expectCreationBoundary(_ client: Client, field: String, accepted: JSON, refused: JSON,
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try await client.get("/v1/sessions?limit=1000")
        let refusal = try await client.post("/v1/sessions", refused)
        expectProblem(refusal, 400, "invalid_field", field: field, sourceLocation: sourceLocation)
        let after = try await client.get("/v1/sessions?limit=1000")
        #expect(after.json == before.json, "a refused creation made nothing", sourceLocation: sourceLocation)
        let reply = try await client.post("/v1/sessions", accepted)
        #expect(reply.status == 201, "\(reply.text.prefix(300))", sourceLocation: sourceLocation)
    }

    @Test func creationFieldsAtTheirLimits() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let atLimit = Self.string(Self.identifier)
        let overLimit = Self.string(Self.identifier + 1)
        for field in ["uid", "label", "language"] {
            let others: [(String, JSON)] = field == "uid" ? [] : [("uid", "u")]
            try await Self.expectCreationBoundary(
                client, field: field,
                accepted: .object(others + [(field, .string(atLimit)), ("id", .string("at-\(field)"))]),
                refused: .object(others + [(field, .string(overLimit))]))
            let view = try await client.get("/v1/sessions/at-\(field)")
            #expect(view[field] == .string(atLimit), "the whole \(field) is stored")
        }
        let prefix = "/embed/feed/v1/"
        try await Self.expectCreationBoundary(
            client, field: "route",
            accepted: ["uid": "u", "route": .string(prefix + Self.string(Self.identifier - prefix.count)), "id": "at-route"],
            refused: ["uid": "u", "route": .string(prefix + Self.string(Self.identifier - prefix.count + 1))])
        #expect(try await client.get("/v1/sessions/at-route")["route"]?.stringValue?.count == Self.identifier)
        for key in ["did", "sid", "client_plat"] {
            try await Self.expectCreationBoundary(
                client, field: "analytics.\(key)",
                accepted: ["uid": "u", "analytics": [key: .string(atLimit)]],
                refused: ["uid": "u", "analytics": [key: .string(overLimit)]])
        }
        // H1: `ctx` is any JSON value, bounded as a payload: {"p":"…"} serialized is 8 bytes plus the string.
        let context = { (count: Int) -> JSON in ["p": .string(String(repeating: "x", count: count - 8))] }
        try await Self.expectCreationBoundary(
            client, field: "analytics.ctx",
            accepted: ["uid": "u", "analytics": ["ctx": context(Self.payloadBytes)]],
            refused: ["uid": "u", "analytics": ["ctx": context(Self.payloadBytes + 1)]])
        try await Self.expectCreationBoundary(
            client, field: "capabilities",
            accepted: ["uid": "u", "capabilities": [.string(atLimit)]],
            refused: ["uid": "u", "capabilities": ["native_dialog.v1", .string(overLimit)]])
        let many = (0..<Self.maxItems).map { JSON.string("cap.\($0)") }
        try await Self.expectCreationBoundary(
            client, field: "capabilities",
            accepted: ["uid": "u", "capabilities": .array(many), "id": "at-capabilities"],
            refused: ["uid": "u", "capabilities": .array(many + ["one.more"])])
        #expect(items(try await client.get("/v1/sessions/at-capabilities")["capabilities"]).count == Self.maxItems)
    }

    /// A NUL was stored whole in the view but cut short in the index column: `?uid=ab` listed
    /// `"ab\u0000cd"` and `DELETE ?label=L` purged `"L\u0000X"`.
    @Test func controlCharactersInIdentifiersAreRefused() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "ab", "id": "plain", "label": "L"])
        let before = try await client.get("/v1/sessions")
        for bad in ["ab\u{0}cd", "a\u{1}", "tab\there", "line\nbreak", "\u{1F}", "del\u{7F}"] {
            for field in ["uid", "label", "language"] {
                let body: JSON = field == "uid" ? ["uid": .string(bad)] : ["uid": "u", field: .string(bad)]
                expectProblem(try await client.post("/v1/sessions", body), 400, "invalid_field", field: field)
            }
            expectProblem(try await client.post("/v1/sessions", ["uid": "u", "capabilities": [.string(bad)]]),
                          400, "invalid_field", field: "capabilities")
            expectProblem(try await client.post("/v1/sessions/plain/lifecycle", ["type": "accountSwitch", "uid": .string(bad)]),
                          400, "invalid_field", field: "uid")
            expectProblem(try await client.post("/v1/sessions/plain/gestures", ["type": "pull", "requestId": .string(bad)]),
                          400, "invalid_field", field: "requestId")
        }
        #expect(try await client.get("/v1/sessions").json == before.json, "nothing was created or changed")
        // Characters beyond the control range are ordinary: U+0080 and a space.
        try await client.create(["uid": "a\u{80} b", "id": "ok", "label": "L x"])
    }

    @Test func queryFiltersAreBoundedAndRefuseControlCharacters() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "ab", "id": "s-ab", "label": "L"])
        try await client.create(["uid": "u", "id": "s-l", "label": "L"])
        let encoded = String(repeating: "a", count: Self.identifier)
        #expect(try await client.get("/v1/sessions?uid=\(encoded)").status == 200)
        #expect(try await client.get("/v1/violations?uid=\(encoded)").status == 200)
        for (path, field) in [("/v1/sessions?uid=ab%00cd", "uid"), ("/v1/sessions?label=L%00X", "label"),
                              ("/v1/sessions?uid=ab%01", "uid"), ("/v1/violations?uid=ab%00cd", "uid"),
                              ("/v1/sessions?uid=\(encoded)a", "uid"), ("/v1/sessions?label=\(encoded)a", "label"),
                              ("/v1/violations?uid=\(encoded)a", "uid")] {
            expectProblem(try await client.get(path), 400, "invalid_field", field: field)
        }
        // An account stream that is not refused never ends: curl gives up on it after 10 s.
        for path in ["/v1/events?uid=ab%00cd", "/v1/events?uid=\(encoded)a"] {
            let (status, body) = try await Self.curl(server, path, seconds: 10)
            #expect(status == 400 && (try? JSON.parse(body))?["field"] == "uid", "\(path): \(status) \(body.prefix(200))")
        }
        expectProblem(try await client.delete("/v1/sessions?label=L%00X"), 400, "invalid_field", field: "label")
        expectProblem(try await client.delete("/v1/sessions?label=\(encoded)a"), 400, "invalid_field", field: "label")
        #expect(ids(in: try await client.get("/v1/sessions")["sessions"] ?? .null).sorted() == ["s-ab", "s-l"],
                "no refused DELETE purged anything")
        #expect(try await client.delete("/v1/sessions?label=\(encoded)")["deleted"] == 0)
    }

    /// The status and body of a GET by `curl --max-time`, awaited without blocking a thread.
    static func curl(_ server: TestServer, _ path: String, seconds: Int) async throws -> (Int, String) {
        let process = try ChildProcess("curl", ["-s", "--max-time", "\(seconds)", "-w", "\n%{http_code}", server.base.absoluteString + path],
                                       output: .pipe)
        // The pipe is read only after curl ends: enough for a small body (under the pipe's 64 KiB).
        _ = await process.ended(within: Double(seconds) + 30)
        let text = String(decoding: process.standardOutput!.readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test func idempotencyKeyIsBoundedAndRefusesControlCharacters() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u", "id": "s1"])
        let before = try await client.get("/v1/sessions/s1")
        let body = Array(#"{"type":"background"}"#.utf8)
        for key in [String(repeating: "k", count: 256), "a\tb"] {
            let reply = try await client.send("POST", "/v1/sessions/s1/lifecycle", body: body, headers: ["Idempotency-Key": key])
            expectProblem(reply, 400, "invalid_field", field: "Idempotency-Key")
        }
        #expect(try await client.get("/v1/sessions/s1").json == before.json)
        let key = String(repeating: "k", count: 255)
        let reply = try await client.send("POST", "/v1/sessions/s1/lifecycle", body: body, headers: ["Idempotency-Key": key])
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
    }
}

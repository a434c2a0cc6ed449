import Foundation
import Testing
import TodayHost

/// Issue 12, item 9, for inputs: gestures, lifecycle, commands, Web events (alone and inside
/// `/steps`). An oversized field of a Web event is the client's `400`, decided before the
/// bridge judges the message: never a `rejected` outcome, never an M8 violation.
extension FieldLimitTests {
    static let payloadBytes = 16384
    static let inputBytes = 65536

    /// `refused` is `400 invalid_field` naming `field` and leaves the session's view (its
    /// version) and timeline as they were; `accepted` is answered `200`, which it returns.
    @discardableResult
    static func expectInputBoundary(_ client: Client, _ endpoint: String, field: String, accepted: JSON, refused: JSON,
                                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> Client.Reply {
        let view = try await client.get("/v1/sessions/s1")
        let timeline = try await client.timeline("s1")
        let refusal = try await client.post("/v1/sessions/s1/\(endpoint)", refused)
        expectProblem(refusal, 400, "invalid_field", field: field, sourceLocation: sourceLocation)
        #expect(try await client.get("/v1/sessions/s1").json == view.json, "the view (version) is unchanged",
                sourceLocation: sourceLocation)
        #expect(try await client.timeline("s1") == timeline, "the timeline is unchanged", sourceLocation: sourceLocation)
        let reply = try await client.post("/v1/sessions/s1/\(endpoint)", accepted)
        #expect(reply.status == 200, "\(reply.text.prefix(300))", sourceLocation: sourceLocation)
        return reply
    }

    static func session(_ client: Client) async throws {
        try await client.create(["uid": "u", "id": "s1", "capabilities": ["native_dialog.v1", "today_page_revalidate_feedback.v1"]])
    }

    @Test func gestureLifecycleAndCommandFieldsAtTheirLimits() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await Self.session(client)
        let at = Self.string(Self.identifier)
        let over = Self.string(Self.identifier + 1)
        try await Self.expectInputBoundary(client, "gestures", field: "requestId",
                                           accepted: ["type": "pull", "requestId": .string(at)],
                                           refused: ["type": "pull", "requestId": .string(over)])
        try await Self.expectInputBoundary(client, "gestures", field: "text",
                                           accepted: ["type": "chat.edit", "text": .string(Self.string(Self.text))],
                                           refused: ["type": "chat.edit", "text": .string(Self.string(Self.text + 1))])
        try await Self.expectInputBoundary(client, "gestures", field: "actionId",
                                           accepted: ["type": "dialog.choose", "actionId": .string(at)],
                                           refused: ["type": "dialog.choose", "actionId": .string(over)])
        try await Self.expectInputBoundary(client, "lifecycle", field: "requestId",
                                           accepted: ["type": "tabActivated", "requestId": .string(Self.string(Self.identifier, "b"))],
                                           refused: ["type": "tabActivated", "requestId": .string(over)])
        let url = "/embed/feeds/v1?x="
        try await Self.expectInputBoundary(client, "lifecycle", field: "url",
                                           accepted: ["type": "navigation", "url": .string(url + Self.string(Self.text - url.count))],
                                           refused: ["type": "navigation", "url": .string(url + Self.string(Self.text - url.count + 1))])
        try await Self.expectInputBoundary(client, "lifecycle", field: "uid",
                                           accepted: ["type": "accountSwitch", "uid": .string(at)],
                                           refused: ["type": "accountSwitch", "uid": .string(over)])
        try await Self.expectInputBoundary(client, "commands", field: "batchId",
                                           accepted: ["type": "todayPage.scrollToSection", "batchId": .string(at)],
                                           refused: ["type": "todayPage.scrollToSection", "batchId": .string(over)])
        // An unknown type is named in the problem's detail: past the limit it is the field that is wrong.
        expectProblem(try await client.post("/v1/sessions/s1/gestures", ["type": .string(over)]), 400, "invalid_field", field: "type")
        expectProblem(try await client.post("/v1/sessions/s1/gestures", ["type": .string(at)]), 400, "unknown_input")
    }

    @Test func webEventFieldsAtTheirLimits() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await Self.session(client)
        let at = Self.string(Self.identifier)
        let over = Self.string(Self.identifier + 1)
        func result(_ requestId: String) -> JSON {
            ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(requestId), "mode": "soft", "status": "succeeded"]
        }
        try await Self.expectInputBoundary(client, "web-events", field: "requestId", accepted: result(at), refused: result(over))
        func rendered(_ batchId: String) -> JSON {
            ["type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": .string(batchId), "elapsedMs": 5]
        }
        try await Self.expectInputBoundary(client, "web-events", field: "batchId", accepted: rendered(at), refused: rendered(over))
        func track(_ event: String, _ properties: JSON = ["k": 1]) -> JSON { ["type": "track", "event": .string(event), "properties": properties] }
        try await Self.expectInputBoundary(client, "web-events", field: "event", accepted: track(at), refused: track(over))
        // {"p":"…"} serialized is 8 bytes plus the string.
        let properties = { (count: Int) -> JSON in ["p": .string(String(repeating: "x", count: count - 8))] }
        try await Self.expectInputBoundary(client, "web-events", field: "properties",
                                           accepted: track("e", properties(Self.payloadBytes)),
                                           refused: track("e", properties(Self.payloadBytes + 1)))
        func failed(_ error: String) -> JSON { ["type": "todayPage.loadFailed", "schemaVersion": 1, "error": .string(error), "elapsedMs": 1] }
        try await Self.expectInputBoundary(client, "web-events", field: "error",
                                           accepted: failed(Self.string(Self.text)), refused: failed(Self.string(Self.text + 1)))
        func link(_ url: String) -> JSON { ["type": "webView.navigationAction", "url": .string(url)] }
        try await Self.expectInputBoundary(client, "web-events", field: "url",
                                           accepted: link(Self.string(Self.text)), refused: link(Self.string(Self.text + 1)))
        func note(_ text: String) -> JSON { ["type": "todayPage.futureEvent", "note": .string(text)] }
        try await Self.expectInputBoundary(client, "web-events", field: "note",
                                           accepted: note(Self.string(Self.text)), refused: note(Self.string(Self.text + 1)))
    }

    @Test func dialogFieldsAtTheirLimits() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await Self.session(client)
        func dialog(title: String = "t", actions: [JSON] = [["actionId": "ok", "title": "OK"]]) -> JSON {
            ["type": "nativeDialog.present", "title": .string(title), "actions": .array(actions)]
        }
        try await Self.expectInputBoundary(client, "web-events", field: "title",
                                           accepted: dialog(title: Self.string(Self.text)), refused: dialog(title: Self.string(Self.text + 1)))
        _ = try await client.input("s1", "gestures", ["type": "dialog.dismiss"])
        let many = (0..<Self.maxItems).map { JSON.object([("actionId", .string("a\($0)")), ("title", "A")]) }
        try await Self.expectInputBoundary(client, "web-events", field: "actions",
                                           accepted: dialog(actions: many), refused: dialog(actions: many + [["actionId": "more", "title": "M"]]))
        _ = try await client.input("s1", "gestures", ["type": "dialog.dismiss"])
        let at: JSON = ["actionId": .string(Self.string(Self.identifier)), "title": .string(Self.string(Self.text)),
                        "role": .string(Self.string(Self.identifier))]
        try await Self.expectInputBoundary(client, "web-events", field: "actions[1].actionId", accepted: dialog(actions: ["ok", at].map(Self.action)),
                                           refused: dialog(actions: [Self.action("ok"), ["actionId": .string(Self.string(Self.identifier + 1)), "title": "T"]]))
        _ = try await client.input("s1", "gestures", ["type": "dialog.dismiss"])
        try await Self.expectInputBoundary(client, "web-events", field: "actions[0].title", accepted: dialog(),
                                           refused: dialog(actions: [["actionId": "x", "title": .string(Self.string(Self.text + 1))]]))
    }

    static func action(_ value: JSON) -> JSON { value.stringValue.map { ["actionId": .string($0), "title": "T"] } ?? value }

    /// Within the limits a malformed known event is the bridge's to judge (`rejected`, M8); past
    /// them it never reaches the bridge.
    @Test func anOversizedWebEventFieldIsRefusedWithoutAnM8() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await Self.session(client)
        func result(mode: String, schemaVersion: JSON = 1) -> JSON {
            ["type": "todayPage.refreshResult", "schemaVersion": schemaVersion, "requestId": "r1", "mode": .string(mode), "status": "succeeded"]
        }
        let judged = try await Self.expectInputBoundary(client, "web-events", field: "mode",
                                                        accepted: result(mode: Self.string(Self.identifier)),
                                                        refused: result(mode: Self.string(Self.identifier + 1)))
        #expect(judged["outcome"] == "rejected")
        let stringVersion = try await Self.expectInputBoundary(client, "web-events", field: "schemaVersion",
                                                               accepted: result(mode: "soft", schemaVersion: .string(Self.string(Self.text))),
                                                               refused: result(mode: "soft", schemaVersion: .string(Self.string(Self.text + 1))))
        #expect(stringVersion["outcome"] == "rejected")
        let violations = try await client.get("/v1/sessions/s1/timeline?kind=violation")
        #expect(violationCodes(violations["entries"]) == ["M8", "M8"], "only the two judged messages are violations")
    }

    /// The whole message as stored: every field within its own limit, together past 64 KiB.
    @Test func aWebEventIsBoundedAsAWhole() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await Self.session(client)
        func message(bytes: Int) -> JSON {
            var members: [(String, JSON)] = [("type", "todayPage.futureEvent")]
            for index in 0..<16 { members.append(("f\(index)", .string(String(repeating: "x", count: 4000)))) }
            members.append(("fill", ""))
            let size = JSON.object(members).serialized().utf8.count
            members[members.count - 1].1 = .string(String(repeating: "y", count: bytes - size))
            return .object(members)
        }
        let reply = try await Self.expectInputBoundary(client, "web-events", field: "body",
                                                       accepted: message(bytes: Self.inputBytes), refused: message(bytes: Self.inputBytes + 1))
        #expect(reply["outcome"] == "ignored")
    }

    @Test func aWebEventInsideStepsIsBoundedToo() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await Self.session(client)
        func steps(_ requestId: String) -> JSON {
            [["gesture": ["type": "pull", "requestId": "p1"]],
             ["webEvent": ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(requestId),
                           "mode": .string(requestId), "status": "succeeded"]]]
        }
        try await Self.expectInputBoundary(client, "steps", field: "requestId",
                                           accepted: steps(Self.string(Self.identifier)), refused: steps(Self.string(Self.identifier + 1)))
        let violations = try await client.get("/v1/sessions/s1/timeline?kind=violation")
        #expect(violationCodes(violations["entries"]) == ["M8"], "only the accepted batch's malformed mode")
    }
}

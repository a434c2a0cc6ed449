import Foundation
import Testing
import TodayHost

extension MonitorEndpointTests {
    /// Gestures and bridge events of H24–H28 over HTTP: the refusals answered as the rules say,
    /// with the coordinators' state unchanged, and the happy paths.
    @Suite struct GestureAndBridgeInputs {
        @Test func gesturesWithNothingToActOnAreIgnored() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "s1"])
            let before = try await client.get("/v1/sessions/s1").json
            let cases: [(JSON, String)] = [
                (["type": "dialog.choose", "actionId": "delete"], "noDialog"),
                (["type": "dialog.dismiss"], "noDialog"),
                (["type": "chat.send"], "noDraft"),
                (["type": "liveWidget.cancelled"], "noSheet"),
            ]
            for (gesture, reason) in cases {
                let reply = try await client.input("s1", "gestures", gesture)
                #expect(reply["outcome"] == "ignored", "\(gesture.serialized())")
                #expect(reply["reason"] == .string(reason), "\(gesture.serialized())")
                #expect(reply["resolution"] == .null)
                #expect(kinds(reply["entries"]) == ["input"], "\(gesture.serialized())")
                #expect(items(reply["entries"]).first?["data"]?["outcome"] == "ignored")
                #expect(items(reply["entries"]).first?["data"]?["reason"] == .string(reason))
            }
            let after = try await client.get("/v1/sessions/s1").json
            #expect(stable(after) == stable(before))
            #expect(after["version"]?.int64Value == (before["version"]?.int64Value ?? 0) + 4, "each ignored input is answered 200")
            #expect(after["counts"]?["timeline"]?.int64Value == (before["counts"]?["timeline"]?.int64Value ?? 0) + 4)
        }

        @Test func theDialogOverHTTP() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "ed", "route": "/embed/feeds/v1/edit"])
            let present: JSON = [
                "type": "nativeDialog.present", "title": "Delete card?",
                "actions": [["actionId": "delete", "title": "Delete", "role": "destructive"], ["actionId": "keep", "title": "Keep"]],
            ]
            let presented = try await client.input("ed", "web-events", present)
            #expect(presented["outcome"] == "applied")
            let callId = try #require(presented["resolution"]?["pending"]?.stringValue)
            #expect(presented["resolution"] == ["pending": .string(callId)])
            #expect(presented["session"]?["dialog"] == [
                "callId": .string(callId), "title": "Delete card?",
                "actions": [["actionId": "delete", "title": "Delete", "role": "destructive"], ["actionId": "keep", "title": "Keep"]],
            ])

            // An action the dialog does not offer is invalid: nothing changes, the dialog stays open.
            let view = try await client.get("/v1/sessions/ed").json
            let timeline = try await client.timeline("ed")
            expectProblem(try await client.post("/v1/sessions/ed/gestures", ["type": "dialog.choose", "actionId": "archive"]),
                                 400, "invalid_field", field: "actionId")
            expectProblem(try await client.post("/v1/sessions/ed/gestures", ["type": "dialog.choose", "actionId": ""]),
                                 400, "invalid_field", field: "actionId")
            #expect(try await client.get("/v1/sessions/ed").json == view)
            #expect(try await client.timeline("ed") == timeline)

            let busy = try await client.input("ed", "web-events", present)
            #expect(busy["outcome"] == "applied")
            #expect(busy["resolution"] == ["type": "busy"])
            #expect(busy["session"]?["dialog"]?["callId"] == .string(callId))

            let chosen = try await client.input("ed", "gestures", ["type": "dialog.choose", "actionId": "delete"])
            #expect(chosen["outcome"] == "applied")
            #expect(kinds(chosen["entries"]) == ["input", "resolution"])
            let resolution = items(chosen["entries"]).last
            #expect(resolution?["type"] == "nativeDialog.present")
            #expect(resolution?["data"] == ["callId": .string(callId), "value": ["type": "action", "actionId": "delete"]])
            #expect(chosen["session"]?["dialog"] == .null)
            let again = try await client.input("ed", "gestures", ["type": "dialog.choose", "actionId": "delete"])
            #expect(again["reason"] == "noDialog")

            let second = try await client.input("ed", "web-events", present)
            let secondCallId = try #require(second["resolution"]?["pending"]?.stringValue)
            #expect(secondCallId != callId)
            let dismissed = try await client.input("ed", "gestures", ["type": "dialog.dismiss"])
            #expect(items(dismissed["entries"]).last?["data"] == ["callId": .string(secondCallId), "value": ["type": "dismissed"]])
            #expect(dismissed["session"]?["dialog"] == .null)
        }

        @Test func malformedDialogsAreRejectedAndOpenNothing() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "ed", "route": "/embed/feeds/v1/edit"])
            let before = try await client.get("/v1/sessions/ed").json
            let cases: [(JSON, String)] = [
                (["type": "nativeDialog.present", "title": "T", "actions": []], "actions"),
                (["type": "nativeDialog.present", "title": "T"], "actions"),
                (["type": "nativeDialog.present", "title": "T", "actions": ["delete"]], "actions[0]"),
                (["type": "nativeDialog.present", "title": "T",
                  "actions": [["actionId": "a", "title": "A"], ["actionId": "a", "title": "Again"]]], "actions[1].actionId"),
                (["type": "nativeDialog.present", "title": "T", "actions": [["actionId": "", "title": "A"]]], "actions[0].actionId"),
                (["type": "nativeDialog.present", "actions": [["actionId": "a", "title": "A"]]], "title"),
            ]
            for (event, field) in cases {
                let reply = try await client.input("ed", "web-events", event)
                #expect(reply["outcome"] == "rejected", "\(event.serialized())")
                #expect(reply["reason"]?.stringValue?.hasPrefix(field + ":") == true, "\(reply["reason"] ?? .null)")
                #expect(reply["resolution"]?["pending"] == nil, "no call is pending")
                #expect(kinds(reply["entries"]) == ["input", "bridge"], "no violation: not a todayPage.* event")
                #expect(items(reply["entries"]).last?["data"]?["field"] == .string(field))
                #expect(reply["session"]?["dialog"] == .null)
            }
            let after = try await client.get("/v1/sessions/ed").json
            #expect(stable(after) == stable(before))
            #expect(try await client.get("/v1/sessions/ed/timeline?kind=resolution")["entries"] == [])
        }

        @Test func malformedTrackIsRejectedAndWellFormedTrackIsForwarded() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "s1", "analytics": ["did": "d1", "sid": "s9", "client_plat": "iphone"]])
            let analyticsBefore = items(try await client.get("/v1/sessions/s1/timeline?kind=analytics")["entries"])
            let before = try await client.get("/v1/sessions/s1").json
            let cases: [(JSON, String)] = [
                (["type": "track"], "event"),
                (["type": "track", "event": ""], "event"),
                (["type": "track", "event": 7], "event"),
                (["type": "track", "event": "card_click", "properties": [1, 2]], "properties"),
                (["type": "track", "event": "card_click", "properties": "card=c1"], "properties"),
                (["type": "track", "event": "card_click", "schemaVersion": 2], "schemaVersion"),
            ]
            for (event, field) in cases {
                let reply = try await client.input("s1", "web-events", event)
                #expect(reply["outcome"] == "rejected", "\(event.serialized())")
                #expect(reply["reason"]?.stringValue?.hasPrefix(field + ":") == true, "\(reply["reason"] ?? .null)")
                #expect(kinds(reply["entries"]) == ["input", "bridge"], "\(event.serialized())")
            }
            #expect(items(try await client.get("/v1/sessions/s1/timeline?kind=analytics")["entries"]) == analyticsBefore)
            #expect(stable(try await client.get("/v1/sessions/s1").json) == stable(before))

            // H24: native values win in place, Web's own fields stay, unset native fields add nothing.
            let tracked = try await client.input("s1", "web-events", [
                "type": "track", "event": "card_click",
                "properties": ["card": "c1", "uid": "web-uid", "did": "web-did", "ctx": "web-ctx"],
            ])
            #expect(tracked["outcome"] == "applied")
            let analytics = items(tracked["entries"]).filter { $0["kind"] == "analytics" }
            #expect(analytics.map { $0["data"] } == [[
                "event": "card_click",
                "properties": ["card": "c1", "uid": "u1", "did": "d1", "ctx": "web-ctx", "sid": "s9", "client_plat": "iphone"],
            ]])
        }

        @Test func theLiveWidgetSheetOverHTTP() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "s1"])
            let before = try await client.get("/v1/sessions/s1").json
            let noSheet = try await client.input("s1", "gestures", ["type": "liveWidget.cancelled"])
            #expect(noSheet["outcome"] == "ignored")
            #expect(noSheet["reason"] == "noSheet")
            #expect(stable(noSheet["session"] ?? .null) == stable(before))

            let present: JSON = ["type": "liveWidgetCreation.present"]
            let presented = try await client.input("s1", "web-events", present)
            #expect(presented["outcome"] == "applied")
            #expect(presented["resolution"] == ["presented": true])
            #expect(presented["session"]?["liveWidgetSheet"] == "presented")
            let already = try await client.input("s1", "web-events", present)
            #expect(already["outcome"] == "applied")
            #expect(already["resolution"] == ["presented": false])
            let cancelled = try await client.input("s1", "gestures", ["type": "liveWidget.cancelled"])
            #expect(cancelled["outcome"] == "applied")
            #expect(cancelled["session"]?["liveWidgetSheet"] == "hidden")
            #expect(cancelled["session"]?["refresh"]?["pending"] == [], "a cancelled creation requests nothing")
            #expect(payloads(in: cancelled["entries"] ?? .null) == [])

            try await client.create(["uid": "u1", "id": "v3", "route": "/embed/feeds/v3"])
            let unavailable = try await client.input("v3", "web-events", present)
            #expect(unavailable["outcome"] == "ignored")
            #expect(unavailable["reason"] == "capabilityNotAdvertised")
            #expect(unavailable["resolution"] == ["presented": false])
            #expect(unavailable["session"]?["liveWidgetSheet"] == "hidden")
        }

        @Test func aTrustedChatLinkThenSendReportsTheAttribution() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "s1", "analytics": ["did": "d1"]])
            let before = try await client.get("/v1/sessions/s1").json
            let untrusted = try await client.input("s1", "web-events", ["type": "webView.navigationAction", "url": "https://example.com/chat?text=hi"])
            #expect(untrusted["outcome"] == "ignored")
            #expect(untrusted["reason"] == "untrustedLink")
            #expect(stable(untrusted["session"] ?? .null) == stable(before))

            let link = "today://chat?text=Hello%20world&msg_trigger_ele_id=card-7&today_src=feed&other=1&today_pos=3&today_src=dup"
            let opened = try await client.input("s1", "web-events", ["type": "webView.navigationAction", "url": .string(link)])
            #expect(opened["outcome"] == "applied")
            #expect(opened["session"]?["chat"] == ["draft": "Hello world", "pendingTriggerId": "card-7"])
            let edited = try await client.input("s1", "gestures", ["type": "chat.edit", "text": "Hello there"])
            #expect(edited["session"]?["chat"] == ["draft": "Hello there", "pendingTriggerId": "card-7"])

            let sent = try await client.input("s1", "gestures", ["type": "chat.send"])
            #expect(sent["outcome"] == "applied")
            #expect(kinds(sent["entries"]) == ["input", "analytics"])
            let entry = items(sent["entries"]).last
            #expect(entry?["type"] == "chat_query_submit")
            #expect(entry?["data"] == [
                "event": "chat_query_submit",
                "properties": ["text": "Hello there", "msg_trigger_ele_id": "card-7", "today_src": "feed", "today_pos": "3",
                               "uid": "u1", "did": "d1"],
            ])
            #expect(sent["session"]?["chat"] == ["draft": nil, "pendingTriggerId": nil])
            let again = try await client.input("s1", "gestures", ["type": "chat.send"])
            #expect(again["outcome"] == "ignored")
            #expect(again["reason"] == "noDraft")
            #expect(kinds(again["entries"]) == ["input"])
        }

        @Test func scrollToSectionFillsItsDefaults() async throws {
            let server = try TestServer()
            let client = Client(server: server)
            try await client.create(["uid": "u1", "id": "s1"])
            let plain = try await client.input("s1", "commands", ["type": "todayPage.scrollToSection", "batchId": "b1"])
            #expect(plain["outcome"] == "applied")
            #expect(plain["resolution"] == .null)
            #expect(kinds(plain["entries"]) == ["input", "emit"])
            #expect(payloads(in: plain["entries"] ?? .null) == [[
                "type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "b1", "behavior": "smooth", "highlight": true,
            ]])
            let explicit = try await client.input("s1", "commands", [
                "type": "todayPage.scrollToSection", "batchId": "b2", "behavior": "auto", "highlight": false,
            ])
            #expect(payloads(in: explicit["entries"] ?? .null) == [[
                "type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "b2", "behavior": "auto", "highlight": false,
            ]])
            expectProblem(try await client.post("/v1/sessions/s1/commands", ["type": "todayPage.scrollToSection"]),
                                 400, "invalid_field", field: "batchId")
            expectProblem(try await client.post("/v1/sessions/s1/commands", ["type": "todayPage.scrollToSection", "batchId": "b", "highlight": "yes"]),
                                 400, "invalid_field", field: "highlight")
        }
    }
}

/// The view without what moves with every input answered `200`: `version`, the clock and the
/// timeline count (the violation count stays).
func stable(_ view: JSON) -> JSON {
    guard case let .object(fields) = view else { return view }
    return .object(fields.compactMap { key, value in
        switch key {
        case "version", "clock": return nil
        case "counts": return (key, ["violations": value["violations"] ?? .null])
        default: return (key, value)
        }
    })
}

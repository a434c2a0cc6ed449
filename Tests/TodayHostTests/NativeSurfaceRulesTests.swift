import Testing
@testable import TodayHost

/// H24 analytics forwarding and H25 chat attribution. (H26–H28: NativeSheetDialogRulesTests.)
@Suite struct NativeSurfaceRulesTests {
    // MARK: H24 Analytics

    @Test func h24_trackIsForwardedWithTheNativeBaseFieldsAndNativeValuesWin() throws {
        var runner = SessionRunner.make {
            $0.analytics = AnalyticsBase(did: "d-1", sid: "sess-9", client_plat: "ios_app", ctx: "today")
        }
        let applied = try runner.apply(Web.track([("event", "card_click"),
                                                  ("properties", ["card_id": "c7", "uid": "web-uid", "position": 3,
                                                                  "sid": "web-sid"])]))
        #expect(applied.outcome == .applied)
        #expect(applied.resolution == .null)
        #expect(applied.trace == ["input:track", "bridge:track", "analytics:card_click"])
        // Web's order kept; uid and sid replaced in place; the other base fields appended (docs/RULES.md#h24).
        #expect(applied.entries(.analytics)[0].data == [
            "event": "card_click",
            "properties": ["card_id": "c7", "uid": "u1", "position": 3, "sid": "sess-9", "did": "d-1",
                           "client_plat": "ios_app", "ctx": "today"],
        ])
        #expect(runner.violations == [])
    }

    @Test func h24_anUnsetNativeFieldAddsNothingAndLeavesWebsValue() throws {
        var runner = SessionRunner.make { $0.analytics = AnalyticsBase(did: "d-1") }
        let withProperties = try runner.apply(Web.track([("event", "widget_seen"),
                                                         ("properties", ["ctx": "web-ctx", "did": "web-did"])]))
        #expect(withProperties.entries(.analytics).map(\.data) == [
            ["event": "widget_seen", "properties": ["ctx": "web-ctx", "did": "d-1", "uid": "u1"]],
        ])
        let bare = try runner.apply(Web.track([("event", "feed_scrolled")]))
        #expect(bare.entries(.analytics).map(\.data) == [
            ["event": "feed_scrolled", "properties": ["uid": "u1", "did": "d-1"]],
        ])
        // `properties: null` counts as absent (docs/RULES.md#h21).
        let nullProperties = try runner.apply(Web.track([("event", "feed_scrolled"), ("properties", nil)]))
        #expect(nullProperties.outcome == .applied)
        #expect(nullProperties.entries(.analytics)[0].data["properties"] == ["uid": "u1", "did": "d-1"])
    }

    @Test func h24_hostEventsCarryUidAndTheSetBaseFields() throws {
        var runner = SessionRunner.make { $0.analytics = AnalyticsBase(sid: "sess-9", ctx: "today") }
        #expect(runner.entries(.analytics).map(\.data) == [
            ["event": "app_sess_start", "properties": ["uid": "u1", "sid": "sess-9", "ctx": "today"]],
            ["event": "page_view", "properties": ["uid": "u1", "sid": "sess-9", "ctx": "today"]],
        ])
        let background = try runner.apply(.lifecycle(.background))
        #expect(background.entries(.analytics).map(\.data) == [
            ["event": "page_end", "properties": ["uid": "u1", "sid": "sess-9", "ctx": "today"]],
        ])
    }

    /// H1: `ctx` is any JSON value (usually an object) and travels as given.
    @Test func h24_h1_ctxIsAnyJSONValueAndTravelsAsGiven() throws {
        let contexts: [JSON] = [["screen": "today", "ab": ["variant": 2]], [1, "two"], .double(3.5), false, "plain"]
        for ctx in contexts {
            var runner = SessionRunner.make { $0.analytics = AnalyticsBase(ctx: ctx) }
            #expect(runner.entries(.analytics).map(\.data) == [
                ["event": "app_sess_start", "properties": ["uid": "u1", "ctx": ctx]],
                ["event": "page_view", "properties": ["uid": "u1", "ctx": ctx]],
            ])
            let applied = try runner.apply(Web.track([("event", "card_click"), ("properties", ["ctx": "web"])]))
            #expect(applied.entries(.analytics)[0].data["properties"] == ["ctx": ctx, "uid": "u1"])
        }
    }

    @Test func h24_aMalformedTrackIsRejectedAndForwardsNothing() throws {
        var runner = SessionRunner.make { $0.analytics = AnalyticsBase(did: "d-1") }
        let broken: [(members: [(String, JSON)], field: String)] = [
            ([("properties", ["a": 1])], "event"),
            ([("event", ""), ("properties", ["a": 1])], "event"),
            ([("event", 7)], "event"),
            ([("event", "card_click"), ("properties", "a=1")], "properties"),
            ([("event", "card_click"), ("properties", [1, 2])], "properties"),
            ([("event", "card_click"), ("schemaVersion", 2)], "schemaVersion"),
        ]
        let analyticsBefore = runner.entries(.analytics).count
        for (members, field) in broken {
            let applied = try runner.apply(Web.track(members))
            #expect(applied.outcome.name == "rejected", "\(field)")
            #expect(applied.trace == ["input:track", "bridge:track"], "\(field)")
            #expect(applied.entries(.bridge)[0].data["field"] == .string(field))
            #expect(applied.resolution == .null)
        }
        #expect(runner.entries(.analytics).count == analyticsBefore)
        #expect(analyticsBefore == 2)
    }

    // MARK: H25 Chat attribution

    static let cardLink = "today://chat/send?text=Hello%20there%20%E4%BD%A0&msg_trigger_ele_id=w-42"
        + "&today_source=card&utm_medium=feed&today_card_id=c7"

    @Test func h25_aTrustedChatLinkPrefillsTheDraftAndTheTriggerId() throws {
        var runner = SessionRunner.make()
        let applied = try runner.apply(Web.link(Self.cardLink))
        #expect(applied.outcome == .applied)
        #expect(applied.resolution == .null)
        #expect(applied.trace == ["input:webView.navigationAction", "bridge:webView.navigationAction"])
        #expect(runner.session.view["chat"] == ["draft": "Hello there 你", "pendingTriggerId": "w-42"])
        #expect(runner.entries(.navigation).count == 1, "routed in-app: the WebView does not navigate")
    }

    @Test func h25_parametersAreDecodedAsAURLParserDoes() throws {
        var runner = SessionRunner.make()
        // Repeated parameters: the first value; `+` stays `+` (docs/RULES.md#h25).
        try runner.apply(Web.link("today://chat?text=first&msg_trigger_ele_id=a&text=second&msg_trigger_ele_id=b"))
        #expect(runner.session.view["chat"] == ["draft": "first", "pendingTriggerId": "a"])
        try runner.apply(Web.link("today://chat?text=1+1%3D2%26more&msg_trigger_ele_id=w%2F9"))
        #expect(runner.session.view["chat"] == ["draft": "1+1=2&more", "pendingTriggerId": "w/9"])
        // Scheme and host compare case-insensitively.
        let upper = try runner.apply(Web.link("TODAY://Chat?text=hi&msg_trigger_ele_id=w-1"))
        #expect(upper.outcome == .applied)
        #expect(runner.session.view["chat"] == ["draft": "hi", "pendingTriggerId": "w-1"])
    }

    @Test func h25_editKeepsTheIdAndSendSubmitsWithAttributionThenClears() throws {
        var runner = SessionRunner.make { $0.analytics = AnalyticsBase(did: "d-1", sid: "sess-9") }
        try runner.apply(Web.link(Self.cardLink))
        let edit = try runner.apply(.gesture(.chatEdit(text: "Edited question")))
        #expect(edit.trace == ["input:chat.edit"])
        #expect(runner.session.view["chat"] == ["draft": "Edited question", "pendingTriggerId": "w-42"])

        let send = try runner.apply(.gesture(.chatSend))
        #expect(send.outcome == .applied)
        #expect(send.trace == ["input:chat.send", "analytics:chat_query_submit"])
        #expect(send.entries(.analytics)[0].data == [
            "event": "chat_query_submit",
            "properties": ["text": "Edited question", "msg_trigger_ele_id": "w-42", "today_source": "card",
                           "today_card_id": "c7", "uid": "u1", "did": "d-1", "sid": "sess-9"],
        ])
        #expect(runner.session.view["chat"] == ["draft": nil, "pendingTriggerId": nil])

        let again = try runner.apply(.gesture(.chatSend))
        #expect(again.outcome == .ignored(.noDraft))
        #expect(again.trace == ["input:chat.send"])
        #expect(again.entries(.input)[0].data == ["input": ["type": "chat.send"], "outcome": "ignored", "reason": "noDraft", "via": "gesture"])
    }

    @Test func h25_sendWithNoDraftOrAnEmptyDraftIsIgnored() throws {
        var runner = SessionRunner.make()
        let noDraft = try runner.apply(.gesture(.chatSend))
        #expect(noDraft.outcome == .ignored(.noDraft))
        #expect(noDraft.trace == ["input:chat.send"])
        try runner.apply(.gesture(.chatEdit(text: "")))
        #expect(try runner.apply(.gesture(.chatSend)).outcome == .ignored(.noDraft))
        // An edit with no link sets a draft of its own: no trigger id, no today_* parameters.
        try runner.apply(.gesture(.chatEdit(text: "typed by hand")))
        let send = try runner.apply(.gesture(.chatSend))
        #expect(send.entries(.analytics).map(\.data) == [
            ["event": "chat_query_submit", "properties": ["text": "typed by hand", "uid": "u1"]],
        ])
        #expect(runner.entries(.analytics).map(\.type) == ["app_sess_start", "page_view", "chat_query_submit"])
    }

    @Test func h25_aLaterCardLinkOverwritesAndALinkWithoutTheIdClearsIt() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.link("today://chat?text=first%20card&msg_trigger_ele_id=w-1&today_card_id=c1"))
        try runner.apply(Web.link("today://chat?text=second%20card&msg_trigger_ele_id=w-2&today_source=s2"))
        #expect(runner.session.view["chat"] == ["draft": "second card", "pendingTriggerId": "w-2"])
        let second = try runner.apply(.gesture(.chatSend))
        #expect(second.entries(.analytics)[0].data["properties"] == [
            "text": "second card", "msg_trigger_ele_id": "w-2", "today_source": "s2", "uid": "u1",
        ])

        try runner.apply(Web.link("today://chat?text=first%20card&msg_trigger_ele_id=w-1"))
        try runner.apply(Web.link("today://chat?text=no%20id&today_card_id=c3"))
        #expect(runner.session.view["chat"] == ["draft": "no id", "pendingTriggerId": nil])
        let third = try runner.apply(.gesture(.chatSend))
        #expect(third.entries(.analytics)[0].data["properties"] == ["text": "no id", "today_card_id": "c3", "uid": "u1"])

        // A link without `text` leaves an empty draft (docs/RULES.md#h25): nothing to send.
        try runner.apply(Web.link("today://chat?msg_trigger_ele_id=w-5"))
        #expect(runner.session.view["chat"] == ["draft": "", "pendingTriggerId": "w-5"])
        #expect(try runner.apply(.gesture(.chatSend)).outcome == .ignored(.noDraft))
    }

    @Test func h25_untrustedLinksAreIgnoredAndLeaveTheChatAlone() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.link(Self.cardLink))
        for url in ["https://example.com/chat?text=evil&msg_trigger_ele_id=x",
                    "today://settings?text=evil&msg_trigger_ele_id=x",
                    "javascript:alert(1)",
                    "todays://chat?text=evil&msg_trigger_ele_id=x",
                    "today:chat?text=evil&msg_trigger_ele_id=x"]
        {
            let applied = try runner.apply(Web.link(url))
            #expect(applied.outcome == .ignored(.untrustedLink), "\(url)")
            #expect(applied.trace == ["input:webView.navigationAction", "bridge:webView.navigationAction"], "\(url)")
            #expect(applied.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "untrustedLink"], "\(url)")
            #expect(runner.session.view["chat"] == ["draft": "Hello there 你", "pendingTriggerId": "w-42"], "\(url)")
        }
        #expect(runner.entries(.navigation).count == 1)
        let send = try runner.apply(.gesture(.chatSend))
        #expect(send.entries(.analytics)[0].data["properties"] == [
            "text": "Hello there 你", "msg_trigger_ele_id": "w-42", "today_source": "card", "today_card_id": "c7",
            "uid": "u1",
        ])
    }

    @Test func h25_h19_anAccountSwitchClearsTheDraftAndTheTriggerId() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.link(Self.cardLink))
        try runner.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(runner.session.view["chat"] == ["draft": nil, "pendingTriggerId": nil])
        #expect(try runner.apply(.gesture(.chatSend)).outcome == .ignored(.noDraft))
        // The old link's attribution does not leak into the next account's submit.
        try runner.apply(.gesture(.chatEdit(text: "new account")))
        let send = try runner.apply(.gesture(.chatSend))
        #expect(send.entries(.analytics)[0].data["properties"] == ["text": "new account", "uid": "u2"])
    }
}

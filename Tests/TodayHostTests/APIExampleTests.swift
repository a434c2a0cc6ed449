import Testing
@testable import TodayHost

/// The contract's session view example (a session backgrounded, then back after 6 s with
/// `requestId: "fg-1"`), reproduced input for input.
@Suite struct APIExampleTests {
    @Test func sessionViewMatchesTheContractExample() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 6000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))

        let expected = try JSON.parse("""
            {
              "id": "s1", "uid": "u1", "label": null, "status": "active", "platform": "ios",
              "route": "/embed/feeds/v1", "language": "en", "loadingGate": "presentation",
              "capabilities": ["today_page_revalidate_feedback.v1", "live_widget_creation.v1"],
              "version": 4,
              "clock": {"mode": "virtual", "nowMs": 6000},
              "app": {"state": "foreground", "backgroundedAtMs": null},
              "document": {"loadId": 1, "url": "/embed/feeds/v1?language=en&uid=u1", "requestId": null,
                           "state": "loading", "overlay": "visible", "cause": "initial",
                           "injected": {"platform": "ios", "surface": "embedded",
                                        "capabilities": ["today_page_revalidate_feedback.v1", "live_widget_creation.v1"]}},
              "header": {"state": "hidden", "requestId": null},
              "pull": {"state": "idle", "requestId": null, "lastOutcome": null, "lastGestureAtMs": null},
              "refresh": {"pending": [{"requestId": "fg-1", "reason": "app_foreground", "requestedAtMs": 6000}],
                          "deadlineAtMs": 11000, "recoveryArmed": true},
              "watchdogs": [{"kind": "softRefreshDeadline", "requestId": null, "dueAtMs": 11000}],
              "counts": {"timeline": 14, "violations": 0}
            }
            """)
        let view = runner.session.view
        guard case let .object(members) = expected else { Issue.record("example is an object"); return }
        for (key, value) in members {
            #expect(view[key] == value || key == "document", "view.\(key)")
        }
        // The document view extends the example with `awaitingResult`; every example field matches.
        guard case let .object(documentFields) = expected["document"]! else { return }
        for (key, value) in documentFields {
            #expect(view["document"]?[key] == value, "view.document.\(key)")
        }

        let last = try #require(runner.timeline.last)
        #expect(last.json == (try JSON.parse("""
            {"seq": 14, "atMs": 6000, "kind": "emit", "type": "todayPage.refreshRequested",
             "requestId": "fg-1", "rule": "H15", "data": {"payload": {"type": "todayPage.refreshRequested",
              "schemaVersion": 1, "requestId": "fg-1", "reason": "app_foreground"}}}
            """)))
    }

    @Test func creationTimelineIsInputNavigationThenAnalytics() throws {
        let runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        #expect(runner.timeline.map(\.kind) == [.input, .navigation, .analytics, .analytics])
        #expect(runner.timeline.map(\.type) == ["create", "initial", "app_sess_start", "page_view"])
        #expect(runner.timeline.map(\.seq) == [1, 2, 3, 4])
        #expect(runner.session.version == 1)
    }
}

import Testing
@testable import TodayHost

/// H15–H20: app lifecycle, WebView navigation and termination, account switch and teardown.
@Suite struct LifecycleRulesTests {
    // MARK: H15 Foreground return

    @Test func h15_backgroundEmitsHiddenVisibilityPairThenPageEnd() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        let background = try runner.apply(.lifecycle(.background))
        #expect(background.outcome == .applied)
        #expect(background.trace == ["input:background", "emit:webView.visibilityWillChange",
                                     "emit:webView.visibilityChanged", "analytics:page_end"])
        let emits = background.entries(.emit).map { $0.data["payload"]! }
        #expect(emits == [
            ["type": "webView.visibilityWillChange", "schemaVersion": 1, "visible": false],
            ["type": "webView.visibilityChanged", "schemaVersion": 1, "visible": false],
        ])
        #expect(background.entries(.analytics)[0].data == ["event": "page_end", "properties": ["uid": "u1"]])
        #expect(runner.session.view["app"] == ["state": "background", "backgroundedAtMs": 1000])
    }

    @Test func h15_backgroundWhileInBackgroundIsIgnoredAndKeepsTheFirstTime() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 3000)
        let again = try runner.apply(.lifecycle(.background))
        #expect(again.outcome == .ignored(.alreadyBackground))
        #expect(again.trace == ["input:background"])
        #expect(again.entries[0].data == ["input": ["type": "background"], "outcome": "ignored", "reason": "alreadyBackground", "via": "lifecycle"])
        #expect(runner.session.app.backgroundedAtMs == 1000)

        // Measured from 1000, not 3000: 5000 ms away by 6000.
        try runner.advance(to: 6000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))
        #expect(runner.pending == ["fg-1"])
    }

    @Test func h15_foregroundAfterTheThresholdRequestsAppForegroundOnce() throws {
        var runner = SessionRunner.make()
        let back = try runner.returnFromBackground(at: 7000, requestId: "fg-1")
        #expect(back.trace == ["input:foreground", "emit:webView.visibilityWillChange", "emit:webView.visibilityChanged",
                               "analytics:page_view", "emit:todayPage.refreshRequested"])
        #expect(back.entries(.emit).map { $0.data["payload"]! } == [
            ["type": "webView.visibilityWillChange", "schemaVersion": 1, "visible": true],
            ["type": "webView.visibilityChanged", "schemaVersion": 1, "visible": true],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "fg-1", "reason": "app_foreground"],
        ])
        #expect(back.entries(.analytics)[0].data == ["event": "page_view", "properties": ["uid": "u1"]])
        #expect(runner.pending == ["fg-1"])
        #expect(runner.session.view["app"] == ["state": "foreground", "backgroundedAtMs": nil])

        let again = try runner.apply(.lifecycle(.foreground(requestId: nil)))
        #expect(again.outcome == .ignored(.alreadyForeground))
        #expect(again.trace == ["input:foreground"])
        #expect(runner.refreshRequests.count == 1)
    }

    @Test func h15_foregroundUnderTheThresholdRequestsNothingAndLeavesTheCallerIdUnused() throws {
        var runner = SessionRunner.make()
        let back = try runner.returnFromBackground(at: 3000, requestId: "fg-1")
        #expect(back.trace == ["input:foreground", "emit:webView.visibilityWillChange", "emit:webView.visibilityChanged",
                               "analytics:page_view"])
        #expect(runner.pending == [])
        #expect(runner.timers == [])
        // The id made no request, so it is still free (H4).
        #expect(runner.refused(.lifecycle(.tabActivated(requestId: "fg-1"))) == nil)
        #expect(runner.pending == ["fg-1"])
    }

    @Test func h15_eachBackgroundIntervalIsMeasuredFromItsOwnStart() throws {
        var runner = SessionRunner.make()
        try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        try runner.apply(Web.result("fg-1"))
        try runner.advance(to: 8000)
        let back = try runner.returnFromBackground(at: 12000, requestId: "fg-2")
        #expect(back.entries(.emit).count == 2)
        #expect(runner.refreshRequests.count == 1)
        #expect(runner.pending == [])
    }

    // MARK: H16 Tab, socket and timer requests

    @Test func h16_tabActivationRequestsTabActivatedWithNoFeedback() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        let tab = try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        #expect(tab.trace == ["input:tabActivated", "emit:todayPage.refreshRequested"])
        #expect(tab.entries(.emit)[0].data["payload"]
                == ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "t1", "reason": "tab_activated"])
        #expect(runner.pending == ["t1"])
        #expect(runner.timers == ["softRefreshDeadline(-)@6000"])
        #expect(runner.header == .hidden)
        #expect(runner.pull == .idle)
    }

    @Test func h16_socketEventAndTimerTickRequestWithNoReason() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.timerTick(requestId: "k1")))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "s1"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "k1"],
        ])
        #expect(runner.session.view["refresh"]?["pending"] == [
            ["requestId": "s1", "reason": nil, "requestedAtMs": 0],
            ["requestId": "k1", "reason": nil, "requestedAtMs": 1000],
        ])
        #expect(runner.timers == ["softRefreshDeadline(-)@5000"])
        #expect(runner.header == .hidden)
        #expect(runner.pull == .idle)
    }

    // MARK: H17 Navigation

    @Test func h17_navigationCancelsRequestsClearsHeaderShowsOverlayAndEndsSpinner() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        try runner.advance(to: 1000)
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 2000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 3000)

        let navigation = try runner.apply(.lifecycle(.navigation(url: "/embed/feeds/v3?language=de&uid=u1")))
        #expect(navigation.trace == ["input:navigation", "request:cancelled", "request:cancelled", "header:hidden",
                                     "navigation:navigation", "overlay:visible", "pull:idle"])
        #expect(navigation.entries(.request).map(\.requestId) == ["p1", "t1"])
        #expect(navigation.entries(.navigation)[0].data
                == ["loadId": 2, "url": "/embed/feeds/v3?language=de&uid=u1", "cause": "navigation"])
        #expect(navigation.entries(.pull)[0].requestId == "p1")
        #expect(navigation.entries(.pull)[0].data == ["state": "idle", "outcome": "cancelled"])
        #expect(runner.session.pull.lastOutcome == .cancelled)
        #expect(runner.timers == [])
        #expect(runner.overlay == .visible)
        #expect(runner.session.document.cause == .navigation)
        #expect(runner.session.document.requestId == nil)
        // Route and capabilities stay; the pull window is not moved (H10).
        #expect(runner.session.view["route"] == "/embed/feeds/v1")
        #expect(runner.session.view["capabilities"] == ["today_page_revalidate_feedback.v1", "live_widget_creation.v1"])
        #expect(runner.session.view["pull"]?["lastGestureAtMs"] == 1000)
    }

    @Test func h17_navigationWithNoURLLoadsTheOwnURLWithoutRequestId() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(to: 1000)
        try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(runner.documentURL == "/embed/feeds/v1?language=en&uid=u1&requestId=p2")
        try runner.advance(to: 2000)

        let navigation = try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(navigation.trace == ["input:navigation", "request:cancelled", "navigation:navigation", "pull:idle"])
        #expect(navigation.entries(.request)[0].requestId == "p2")
        #expect(runner.documentURL == "/embed/feeds/v1?language=en&uid=u1")
        #expect(runner.loadId == 3)
        #expect(runner.session.document.requestId == nil)
        #expect(runner.pull == .idle)
    }

    @Test func h17_navigationToAPathOutsideEmbedIsInvalid() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        let version = runner.session.version
        let seq = runner.lastSeq
        for url in ["https://example.com/embed/feeds/v1", "/other/page", ""] {
            let refusal = runner.refused(.lifecycle(.navigation(url: url)))
            let error = try #require(refusal)
            #expect(invalidField(error) == "url", "\(url)")
        }
        #expect(runner.session.version == version)
        #expect(runner.lastSeq == seq)
        #expect(runner.loadId == 1)
        #expect(runner.pullId == "p1")
    }

    // MARK: H18 Web content termination

    @Test func h18_terminationWithTheBudgetReloadsAndTheSpinnerFollows() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 2000)
        let terminated = try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        #expect(terminated.trace == ["input:webContentTerminated", "header:hidden", "request:cancelled",
                                     "navigation:termination", "pull:refreshing"])
        #expect(terminated.entries(.request)[0].requestId == "p1")
        #expect(terminated.entries(.navigation)[0].data
                == ["loadId": 2, "url": "/embed/feeds/v1?language=en&uid=u1&requestId=term-1", "cause": "termination"])
        #expect(terminated.entries(.pull)[0].requestId == "term-1")
        #expect(runner.pullId == "term-1")
        #expect(runner.timers == ["pullWatchdog(term-1)@12000"])
        #expect(runner.documentState == .loading)
        #expect(runner.recoveryArmed == false)
        #expect(runner.pending == [])
    }

    @Test func h18_terminationWithNothingPendingIsStillAFailure() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        let terminated = try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        #expect(terminated.trace == ["input:webContentTerminated", "navigation:termination"])
        #expect(runner.loadId == 2)
        #expect(runner.session.document.cause == .termination)
        #expect(runner.recoveryArmed == false)
    }

    @Test func h18_terminationWithTheBudgetSpentEndsSpinnerAndWaitsForAPull() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(to: 1000)
        try runner.apply(Web.result("p1", "failed"))
        let recoveryId = try #require(runner.session.document.requestId)
        #expect(runner.pullId == recoveryId)
        #expect(runner.recoveryArmed == false)

        try runner.advance(to: 2000)
        let terminated = try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        #expect(terminated.trace == ["input:webContentTerminated", "pull:idle"])
        #expect(terminated.entries(.pull)[0].data == ["state": "idle", "outcome": "cancelled"])
        #expect(runner.documentState == .terminated)
        #expect(runner.loadId == 2)

        // Soft requests are still sent (docs/RULES.md#h18); their expiry cannot reload.
        try runner.advance(to: 3000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 19999)
        #expect(runner.settled["t1"] == "timedOut")
        #expect(runner.documentState == .terminated)
        #expect(runner.loadId == 2)

        try runner.advance(to: 20000)
        let pull = try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(pull.trace == ["input:pull", "pull:refreshing", "request:cancelled", "navigation:manualRepeat"])
        #expect(runner.documentURL == "/embed/feeds/v1?language=en&uid=u1&requestId=p2")
        #expect(runner.loadId == 3)
        #expect(runner.recoveryArmed == true)
    }

    @Test func h15_foregroundReturnAfterExactly4999msRequestsNothing() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        let back = try runner.returnFromBackground(at: 5999, requestId: "fg-1")
        #expect(back.trace == ["input:foreground", "emit:webView.visibilityWillChange", "emit:webView.visibilityChanged",
                               "analytics:page_view"])
        #expect(runner.refreshRequests == [])
        #expect(runner.pending == [])
        #expect(runner.timers == [])
    }

    @Test func h15_foregroundReturnAfterExactly5000msMakesOneAppForegroundRequest() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        let back = try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        #expect(back.trace == ["input:foreground", "emit:webView.visibilityWillChange", "emit:webView.visibilityChanged",
                               "analytics:page_view", "emit:todayPage.refreshRequested"])
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "fg-1", "reason": "app_foreground"],
        ])
        #expect(runner.pending == ["fg-1"])
        #expect(runner.timers == ["softRefreshDeadline(-)@11000"])
    }
}

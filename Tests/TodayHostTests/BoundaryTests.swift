import Testing
@testable import TodayHost

/// The edges of the timing rules, one millisecond either side, and the stale-result cases.
@Suite struct BoundaryTests {
    // MARK: H15 foreground threshold

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

    // MARK: H10 manual refresh window

    @Test func h10_secondPullAtExactly10000msReloadsWithCauseManualRepeat() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(to: 1000)
        try runner.apply(Web.result("p1", "succeeded"))
        try runner.advance(to: 10000)

        let second = try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(second.trace == ["input:pull", "pull:refreshing", "navigation:manualRepeat"])
        #expect(second.entries(.navigation)[0].data
                == ["loadId": 2, "url": "/embed/feeds/v1?language=en&uid=u1&requestId=p2", "cause": "manualRepeat"])
        #expect(runner.refreshRequests.count == 1)
        #expect(runner.pending == [])
        #expect(runner.pullId == "p2")
        #expect(runner.timers == ["pullWatchdog(p2)@22000"])
        #expect(runner.session.document.requestId == "p2")
        #expect(runner.session.document.awaitingResult == true)
    }

    @Test func h10_secondPullAt10001msIsASoftRequest() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(to: 1000)
        try runner.apply(Web.result("p1", "succeeded"))
        try runner.advance(to: 10001)

        let second = try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(second.trace == ["input:pull", "pull:refreshing", "emit:todayPage.refreshRequested"])
        #expect(second.entries(.emit)[0].data["payload"]
                == ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "p2", "reason": "user_pull"])
        #expect(runner.loadId == 1)
        #expect(runner.pending == ["p2"])
        #expect(runner.pullId == "p2")
        #expect(runner.timers == ["softRefreshDeadline(-)@15001", "pullWatchdog(p2)@22001"])
    }

    // MARK: H13 settle edge

    @Test func h13_headerResultShowsUpdatedAtPlus999AndHiddenAtPlus1000() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 2000)
        try runner.apply(Web.result("h1", "succeeded"))
        #expect(runner.header == .updated)

        #expect(try runner.advance(by: 999).trace == ["input:clock"])
        #expect(runner.now == 2999)
        #expect(runner.header == .updated)
        #expect(runner.headerId == "h1")

        let edge = try runner.advance(by: 1)
        #expect(edge.trace == ["input:clock", "watchdog:headerHide", "header:hidden"])
        #expect(edge.entries(.header)[0].atMs == 3000)
        #expect(runner.header == .hidden)
    }

    // MARK: H5 one shared deadline

    @Test func h5_twoRequests3sApartShareOneDeadlineAtFirstPlus5000() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        #expect(runner.timers == ["softRefreshDeadline(-)@6000"])
        try runner.advance(to: 4000)
        try runner.apply(.lifecycle(.socketEvent(requestId: "s2")))
        #expect(runner.timers == ["softRefreshDeadline(-)@6000"])
        #expect(runner.session.view["refresh"]?["deadlineAtMs"] == 6000)

        #expect(try runner.advance(to: 5999).trace == ["input:clock"])
        #expect(runner.pending == ["t1", "s2"])

        let expiry = try runner.advance(to: 6000)
        #expect(expiry.trace == ["input:clock", "watchdog:softRefreshDeadline", "request:timedOut", "request:timedOut",
                                 "navigation:recovery"])
        #expect(expiry.entries(.request).map(\.requestId) == ["t1", "s2"])
        #expect(expiry.entries(.request).map(\.atMs) == [6000, 6000])
        #expect(runner.pending == [])
    }

    // MARK: H8 stale results

    @Test func h8_lateFailureAfterTheDeadlineIsStaleAndReloadsNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 5000)
        #expect(runner.settled["t1"] == "timedOut")
        let recoveryId = try #require(runner.session.document.requestId)
        #expect(runner.loadId == 2)
        // The recovery load answers: the budget is armed again (H9).
        try runner.advance(to: 5500)
        try runner.apply(Web.result(recoveryId, "succeeded", mode: "hard"))
        #expect(runner.recoveryArmed == true)

        try runner.advance(to: 6000)
        let late = try runner.apply(Web.result("t1", "failed"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(late.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(late.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "staleResult"])
        #expect(runner.loadId == 2)
        #expect(runner.recoveryArmed == true)
        #expect(runner.settled["t1"] == "timedOut")
    }

    @Test func h8_lateSuccessAfterTheDeadlineIsStaleAndDoesNotRearm() throws {
        var runner = SessionRunner.make()
        try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        try runner.apply(Web.started("fg-1"))
        try runner.advance(to: 11000)
        #expect(runner.settled["fg-1"] == "timedOut")
        #expect(runner.recoveryArmed == false)
        #expect(runner.header == .hidden)

        let late = try runner.apply(Web.result("fg-1", "succeeded"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(late.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(runner.recoveryArmed == false)
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
    }

    @Test func h8_resultAfterANavigationIsStale() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(runner.settled == ["p1": "cancelled", "t1": "cancelled"])
        #expect(runner.loadId == 2)
        #expect(runner.recoveryArmed == true)

        try runner.advance(to: 2000)
        let failed = try runner.apply(Web.result("t1", "failed"))
        #expect(failed.outcome == .ignored(.staleResult))
        #expect(failed.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(runner.loadId == 2)
        #expect(runner.recoveryArmed == true)

        let succeeded = try runner.apply(Web.result("p1", "succeeded"))
        #expect(succeeded.outcome == .ignored(.staleResult))
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .cancelled)
        #expect(runner.settled == ["p1": "cancelled", "t1": "cancelled"])
    }

    @Test func h8_secondResultForTheSameIdIsStale() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.result("t1", "succeeded"))
        let second = try runner.apply(Web.result("t1", "failed"))
        #expect(second.outcome == .ignored(.staleResult))
        #expect(runner.loadId == 1)
        #expect(runner.settled == ["t1": "succeeded"])
    }
}

import Testing
@testable import TodayHost

/// H10, H11: the pull-to-refresh spinner and the manual-refresh window.
@Suite struct PullRulesTests {
    @Test func h10_pullStartsTheSpinnerAndAsksWebWithUserPull() throws {
        var runner = SessionRunner.make()
        let applied = try runner.apply(.gesture(.pull(requestId: "p1")))
        #expect(applied.entries.map(\.kind) == [.input, .pull, .emit])
        #expect(applied.entries[1].data == ["state": "refreshing"])
        #expect(runner.pull == .refreshing)
        #expect(runner.pullId == "p1")
        #expect(runner.session.view["pull"] == ["state": "refreshing", "requestId": "p1", "lastOutcome": nil, "lastGestureAtMs": 0])
        #expect(runner.session.watchdogs.map(\.json) == [
            ["kind": "softRefreshDeadline", "requestId": nil, "dueAtMs": 5000],
            ["kind": "pullWatchdog", "requestId": "p1", "dueAtMs": 12_000],
        ])
        // The host never shows header feedback for a pull by itself.
        #expect(runner.header == .hidden)
        #expect(runner.entries(.header).isEmpty)
    }

    @Test func h10_repeatedGesturesWithinTheWindowReloadAtOnceEveryTime() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 4000)
        let second = try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(second.entries.map(\.kind) == [.input, .pull, .request, .navigation])
        #expect(second.entries[3].data == ["loadId": 2, "url": "/embed/feeds/v1?language=en&uid=u1&requestId=p2", "cause": "manualRepeat"])
        #expect(runner.settled["p1"] == "cancelled")
        try runner.advance(by: 9000)
        let third = try runner.apply(.gesture(.pull(requestId: "p3")))
        #expect(third.entries.filter { $0.kind == .navigation }.map { $0.data["cause"] } == ["manualRepeat"])
        #expect(runner.refreshRequests.count == 1, "only the first gesture asked Web")
        // The spinner belongs to the newest gesture, its watchdog from that gesture.
        #expect(runner.pullId == "p3")
        #expect(runner.session.watchdogs.map(\.dueAtMs) == [13_000 + 12_000])
    }

    @Test func h10_resultsAndAutomaticRefreshesDoNotMoveTheWindow() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.result("p1"))
        try runner.advance(by: 6000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.navigation(url: nil)))
        try runner.advance(by: 4001)
        // 10001 ms after the only gesture: a soft request, not a reload.
        try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(runner.pending == ["p2"])
        #expect(runner.session.document.cause == .navigation)
    }

    @Test func h10_pullReArmsTheBudgetAndReloadsATerminatedDocument() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r1")))
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r2")))  // budget spent: stays terminated
        #expect(runner.session.document.state == .terminated)
        #expect(runner.session.recovery.armed == false)
        try runner.apply(.gesture(.pull(requestId: "p1")))
        #expect(runner.session.recovery.armed)
        #expect(runner.session.document.cause == .manualRepeat)
        #expect(runner.session.document.requestId == "p1")
        #expect(runner.session.document.state == .loading)
        #expect(runner.pending.isEmpty)
    }

    @Test func h11_anotherIdsResultLeavesTheSpinnerUp() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.result("t1"))
        #expect(runner.pull == .refreshing)
        #expect(runner.pullId == "p1")
    }

    @Test func h11_spinnerEndsOnTheResultForItsIdWithThatStatus() throws {
        for (status, outcome) in [("succeeded", RequestOutcome.succeeded), ("failed", .failed),
                                  ("cancelled", .cancelled), ("unsupported", .unsupported), ("later", .unknown)] {
            var runner = SessionRunner.make()
            try runner.apply(.gesture(.pull(requestId: "p1")))
            // The termination spends the budget; its reload carries the spinner.
            try runner.apply(.lifecycle(.webContentTerminated(requestId: "r1")))
            #expect(runner.pullId == "r1")
            let ended = try runner.apply(Web.result("r1", status, mode: "hard"))
            #expect(runner.navigations.count == 2, "budget spent: no reload after \(status)")
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == outcome, "\(status)")
            #expect(ended.entries.last?.data == ["state": "idle", "outcome": .string(outcome.rawValue)])
        }
    }

    @Test func h11_watchdogEndsTheSpinnerTimedOut() throws {
        var runner = SessionRunner.make { $0.timing.softRefreshDeadlineMs = 20_000 }
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 11_999)
        #expect(runner.pull == .refreshing)
        let fired = try runner.advance(by: 1)
        #expect(fired.entries.map(\.kind) == [.input, .watchdog, .pull])
        #expect(fired.entries[2].data == ["state": "idle", "outcome": "timedOut"])
        #expect(runner.pending == ["p1"], "the watchdog ends the spinner, not the request")
    }

    @Test func h11_navigationAccountSwitchAndTeardownEndItCancelled() throws {
        let endings: [Input] = [.lifecycle(.navigation(url: nil)), .lifecycle(.accountSwitch(uid: "u2")), .teardown]
        for ending in endings {
            var runner = SessionRunner.make()
            try runner.apply(.gesture(.pull(requestId: "p1")))
            try runner.apply(ending)
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .cancelled)
            #expect(runner.session.watchdogs.isEmpty)
        }
    }

    @Test func h11_hostReloadCarriesTheSpinnerKeepingItsWatchdog() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 5000)  // expiry: recovery reload
        let reloadId = try #require(runner.session.document.requestId)
        #expect(runner.pullId == reloadId)
        #expect(runner.entries(.pull).last?.data == ["state": "refreshing"])
        #expect(runner.session.watchdogs.map(\.json) == [["kind": "pullWatchdog", "requestId": .string(reloadId), "dueAtMs": 12_000]])
        try runner.apply(Web.result(reloadId, mode: "hard"))
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .succeeded)
        #expect(runner.session.recovery.armed, "a succeeded result for the reload re-arms")
    }

    @Test func h11_consumedWithoutReloadTheSpinnerEnds() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r0")))
        try runner.apply(Web.result("r0", "failed", mode: "hard"))  // budget spent, no reload
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.gesture(.pull(requestId: "p1")))  // re-arms
        try runner.apply(Web.result("t1", "failed"))  // spends it: reload carries the spinner
        #expect(runner.pull == .refreshing)
        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))  // budget spent: spinner ends
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .cancelled)
        #expect(runner.session.document.state == .terminated)
    }

    /// H11 with H9 (docs/RULES.md#h11): a failure result for the spinner's own id, with the
    /// budget armed, does not end the spinner `failed`: the recovery reload carries it to the
    /// reload's id, and its watchdog stays due where the gesture put it.
    @Test func h11_h9_aFailureForTheSpinnersOwnIdCarriesItToTheRecoveryReload() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(to: 1000)
        let failed = try runner.apply(Web.result("p1", "failed"))
        let reloadId = try #require(runner.session.document.requestId)
        #expect(failed.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult", "request:failed",
                                 "navigation:recovery", "pull:refreshing"])
        #expect(failed.entries(.pull).map(\.requestId) == [reloadId])
        #expect(runner.session.document.cause == .recovery)
        #expect(runner.pull == .refreshing)
        #expect(runner.pullId == reloadId)
        #expect(runner.timers == ["pullWatchdog(\(reloadId))@12000"])

        // Nothing but the reload's own answer or that watchdog ends it now.
        try runner.advance(to: 11_999)
        #expect(runner.pull == .refreshing)
        try runner.advance(to: 12_000)
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .timedOut)
    }

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
}

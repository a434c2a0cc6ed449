import Testing
@testable import TodayHost

/// The contract monitor, M6–M9 (render facts, deadlines, malformed events, the overlay), and
/// that no breach changes what the host does.
@Suite struct ContractMonitorRenderTests {
    // MARK: M6 loadFailed after a rendered batch

    @Test func m6_loadFailedAfterFirstBatchOfTheSameLoadIsAViolation() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.firstBatch())
        let failed = try runner.apply(Web.loadFailed())
        #expect(failed.violations == ["M6(-)"])
        #expect(runner.session.violationCount == 1)
        #expect(runner.viewViolationCount == 1)
        // H22: the document is failed all the same.
        #expect(failed.outcome == .applied)
        #expect(runner.documentState == .failed)
    }

    @Test func m6_aNonEmptyAllBatchesRenderedCountsAsARenderedBatch() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.allBatches(empty: false))
        #expect(try runner.apply(Web.loadFailed()).violations == ["M6(-)"])
        #expect(runner.viewViolationCount == 1)
    }

    @Test func m6_clean_loadFailedFirstAfterAnEmptyLoadOrInANewLoadRecordsNothing() throws {
        var first = SessionRunner.make()
        try first.apply(Web.loadingPresentation())
        #expect(try first.apply(Web.loadFailed()).violations == [])

        var empty = SessionRunner.make()
        try empty.apply(Web.loadingPresentation())
        try empty.apply(Web.allBatches(empty: true))
        #expect(try empty.apply(Web.loadFailed()).violations == [])

        var newLoad = SessionRunner.make()
        try newLoad.apply(Web.loadingPresentation())
        try newLoad.apply(Web.firstBatch())
        try newLoad.apply(.lifecycle(.navigation(url: nil)))
        try newLoad.apply(Web.loadingPresentation())
        #expect(try newLoad.apply(Web.loadFailed()).violations == [])
        #expect(newLoad.loadId == 2)

        #expect(first.viewViolationCount == 0)
        #expect(empty.viewViolationCount == 0)
        #expect(newLoad.viewViolationCount == 0)
    }

    // MARK: M7 Native requests never answered

    @Test func m7_deadlineExpiryRecordsOneViolationPerUnansweredRequest() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        let expiry = try runner.advance(to: 5000)
        #expect(expiry.violations == ["M7(t1)", "M7(s1)"])
        #expect(expiry.entries(.violation).map(\.atMs) == [5000, 5000])
        #expect(runner.session.violationCount == 2)
        #expect(runner.viewViolationCount == 2)
        // H6/H9: both timed out and the budget reloaded the document.
        #expect(runner.settled == ["t1": "timedOut", "s1": "timedOut"])
        #expect(runner.session.document.cause == .recovery)

        // An unanswered pull is flagged too; its gesture re-armed the budget (H10), so the
        // document reloads again and the spinner follows it (H11).
        try runner.apply(.gesture(.pull(requestId: "p1")))
        let second = try runner.advance(to: 10_000)
        #expect(second.violations == ["M7(p1)"])
        #expect(runner.settled["p1"] == "timedOut")
        #expect(runner.loadId == 3)
        #expect(runner.pull == .refreshing)
        #expect(runner.pullId == runner.session.document.requestId)
        #expect(runner.viewViolationCount == 3)
    }

    @Test func m7_clean_answeredOrConsumedRequestsRecordNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        try runner.advance(to: 4999)
        try runner.apply(Web.result("t1"))
        try runner.apply(Web.result("s1", "failed"))
        try runner.runUntilIdle()
        #expect(runner.violations == [])

        // A request consumed by a navigation had no deadline left to miss.
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 1000)
        try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(runner.settled["p1"] == "cancelled")
        try runner.runUntilIdle()
        #expect(runner.violations == [])
        #expect(runner.viewViolationCount == 0)
    }

    // MARK: M8 Malformed todayPage.* events

    @Test func m8_everyKnownTodayPageEventRejectedAtTheBoundaryIsAViolation() throws {
        // Each violation names the id the broken message carried, if any.
        let broken: [(Input, String)] = [
            (Web.refreshStarted([("schemaVersion", 1), ("requestId", "h1"), ("presentation", "toast")]), "M8(h1)"),
            (Web.refreshResult([("schemaVersion", 1), ("requestId", "t1"), ("mode", "medium"), ("status", "succeeded")]), "M8(t1)"),
            (Web.message([("type", "todayPage.firstBatchRendered"), ("schemaVersion", 1), ("batchId", ""), ("elapsedMs", 1)]), "M8(-)"),
            (Web.message([("type", "todayPage.allBatchesRendered"), ("schemaVersion", 1), ("status", "partial"),
                          ("empty", "no"), ("elapsedMs", 1)]), "M8(-)"),
            (Web.message([("type", "todayPage.loadFailed"), ("elapsedMs", 1), ("error", "x")]), "M8(-)"),
        ]
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        for (input, expected) in broken {
            let applied = try runner.apply(input)
            #expect(applied.outcome.name == "rejected", "\(input.typeName)")
            #expect(applied.violations == [expected], "\(input.typeName)")
        }
        #expect(runner.session.violationCount == 5)
        #expect(runner.viewViolationCount == 5)
        // H21: none reached a coordinator.
        #expect(runner.pending == ["t1"])
        #expect(runner.header == .hidden)
        #expect(runner.documentState == .loading)
    }

    @Test func m8_clean_otherRejectedEventsAndUnknownTodayPageTypesRecordNothing() throws {
        var runner = SessionRunner.make()
        let notM8: [Input] = [
            Web.track([("event", "")]),
            Web.message([("type", "webView.loadingPresentation"), ("owner", 5)]),
            Web.message([("type", "webView.navigationAction"), ("url", 5)]),
            Web.message([("type", "nativeDialog.present"), ("title", "Delete?"), ("actions", [])]),
            Web.message([("type", "liveWidgetCreation.present"), ("schemaVersion", 2)]),
        ]
        for input in notM8 {
            let applied = try runner.apply(input)
            #expect(applied.outcome.name == "rejected", "\(input.typeName)")
            #expect(applied.violations == [], "\(input.typeName)")
        }
        let unknown = try runner.apply(Web.message([("type", "todayPage.somethingNew"), ("schemaVersion", "x")]))
        #expect(unknown.outcome == .ignored(.unknownEvent))
        #expect(unknown.violations == [])
        #expect(runner.viewViolationCount == 0)
    }

    // MARK: M9 Render before the overlay is released

    @Test func m9_renderingBeforeReleasingTheOverlayIsAViolationForEveryRenderEvent() throws {
        var runner = SessionRunner.make()
        let first = try runner.apply(Web.firstBatch())
        #expect(first.violations == ["M9(-)"])
        let all = try runner.apply(Web.allBatches(empty: true))
        #expect(all.violations == ["M9(-)"])
        #expect(runner.session.violationCount == 2)
        #expect(runner.viewViolationCount == 2)
        // H23: nothing but Web's release hides the overlay on a presentation host.
        #expect(runner.overlay == .visible)
        #expect(runner.documentState == .rendered)
        try runner.apply(Web.loadingPresentation())
        #expect(runner.overlay == .hidden)
        #expect(try runner.apply(Web.allBatches(empty: false)).violations == [])
        #expect(runner.viewViolationCount == 2)
    }

    @Test func m9_loadFailedBeforeReleaseAndEachNewLoadAreCheckedAgain() throws {
        var runner = SessionRunner.make()
        #expect(try runner.apply(Web.loadFailed()).violations == ["M9(-)"])
        try runner.apply(Web.loadingPresentation())
        try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(runner.overlay == .visible)
        #expect(try runner.apply(Web.firstBatch()).violations == ["M9(-)"])
        #expect(runner.viewViolationCount == 2)
    }

    @Test func m9_clean_releasingFirstOrARenderGateHostRecordsNothing() throws {
        var released = SessionRunner.make()
        try released.apply(Web.loadingPresentation(reason: "placeholders_visible"))
        try released.apply(Web.firstBatch())
        try released.apply(Web.allBatches(empty: false))
        #expect(released.violations == [])

        var renderGate = SessionRunner.make { $0.loadingGate = .render }
        let first = try renderGate.apply(Web.firstBatch())
        #expect(first.violations == [])
        #expect(renderGate.overlay == .hidden)
        try renderGate.apply(Web.allBatches(empty: true))
        try renderGate.apply(.lifecycle(.navigation(url: nil)))
        try renderGate.apply(Web.loadFailed())
        #expect(try renderGate.apply(Web.loadingPresentation()).outcome == .ignored(.unknownEvent))
        #expect(renderGate.violations == [])
        #expect(renderGate.viewViolationCount == 0)
    }

    // MARK: The monitor changes no behaviour

    @Test func monitor_aBreachingInputDoesWhatItsConformingTwinDoes() throws {
        // M9: a render before the release vs. the same render after it.
        var early = SessionRunner.make()
        var onTime = SessionRunner.make()
        try onTime.apply(Web.loadingPresentation())
        let earlyRender = try early.apply(Web.firstBatch())
        let onTimeRender = try onTime.apply(Web.firstBatch())
        #expect(earlyRender.violations == ["M9(-)"])
        #expect(onTimeRender.violations == [])
        #expect(earlyRender.behaviour == onTimeRender.behaviour)

        // M6: loadFailed after a rendered batch vs. loadFailed on a load with none.
        let lateFailure = try onTime.apply(Web.loadFailed())
        var failedFirst = SessionRunner.make()
        try failedFirst.apply(Web.loadingPresentation())
        let firstFailure = try failedFirst.apply(Web.loadFailed())
        #expect(lateFailure.violations == ["M6(-)"])
        #expect(firstFailure.violations == [])
        #expect(lateFailure.behaviour == firstFailure.behaviour)

        // M3 vs. a conforming start for the same id: a silent socket request vs. a foreground return.
        var silent = SessionRunner.make()
        try silent.advance(to: 6000)
        try silent.apply(.lifecycle(.socketEvent(requestId: "x1")))
        var foreground = SessionRunner.make()
        try foreground.returnFromBackground(at: 6000, requestId: "x1")
        let silentMark = silent.lastSeq
        let foregroundMark = foreground.lastSeq
        #expect(try silent.apply(Web.started("x1")).violations == ["M3(x1)"])
        #expect(try foreground.apply(Web.started("x1")).violations == [])
        try silent.apply(Web.result("x1"))
        try foreground.apply(Web.result("x1"))
        try silent.runUntilIdle()
        try foreground.runUntilIdle()
        // Entry for entry the same, but for the settled request's reason (what made it M3).
        let silentBehaviour = silent.behaviour(after: silentMark)
        let foregroundBehaviour = foreground.behaviour(after: foregroundMark)
        #expect(silentBehaviour.count == 10)
        #expect(silentBehaviour[5]["data"] == ["outcome": "succeeded"])
        #expect(foregroundBehaviour[5]["data"] == ["outcome": "succeeded", "reason": "app_foreground"])
        #expect(silentBehaviour[..<5] == foregroundBehaviour[..<5])
        #expect(silentBehaviour[6...] == foregroundBehaviour[6...])
        #expect(silent.header == .hidden)
    }

    @Test func monitor_aHardLoadSucceededEarlyEndsInTheSameStateAsAConformingOne() throws {
        var early = try ContractMonitorTests.reloadedByRepeatedPull()
        try early.apply(Web.result("p2", mode: "hard"))
        try early.apply(Web.loadingPresentation())
        try early.apply(Web.firstBatch(requestId: "p2"))

        var conforming = try ContractMonitorTests.reloadedByRepeatedPull()
        try conforming.apply(Web.loadingPresentation())
        try conforming.apply(Web.firstBatch(requestId: "p2"))
        try conforming.apply(Web.result("p2", mode: "hard"))

        #expect(early.violations == ["M5(p2)"])
        #expect(conforming.violations == [])
        #expect(early.viewWithoutCounts == conforming.viewWithoutCounts)
        #expect(early.viewWithoutCounts["document"]?["state"] == "rendered")
        #expect(early.viewWithoutCounts["document"]?["awaitingResult"] == false)
        #expect(early.viewWithoutCounts["pull"]?["lastOutcome"] == "succeeded")
        #expect(early.settled == conforming.settled)
    }

    /// M7: an expired request's `request timedOut` entry, then its own M7, request by request,
    /// all before the recovery reload the expiry makes.
    @Test func m7_eachExpiredRequestsTimedOutEntryIsFollowedByItsOwnViolation() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        let expiry = try runner.advance(to: 5000)
        let reloadId = try #require(runner.session.document.requestId)
        #expect(expiry.placed == ["input:clock(-)", "watchdog:softRefreshDeadline(-)",
                                  "request:timedOut(t1)", "violation:M7(t1)",
                                  "request:timedOut(s1)", "violation:M7(s1)",
                                  "navigation:recovery(\(reloadId))"])
    }

    /// M9 before M6: one `loadFailed` after a rendered batch of a load Web never released breaks
    /// both; both follow the bridge entry they judge, lower rule first.
    @Test func m9_m6_oneLoadFailedBreakingBothIsJudgedInRuleOrder() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.firstBatch())
        let failed = try runner.apply(Web.loadFailed())
        #expect(failed.placed == ["input:todayPage.loadFailed(-)", "bridge:todayPage.loadFailed(-)",
                                  "violation:M9(-)", "violation:M6(-)"])
    }
}

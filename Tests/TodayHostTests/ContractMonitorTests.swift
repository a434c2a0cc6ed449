import Testing
@testable import TodayHost

/// The contract monitor, M1–M5: breaches of the refresh protocol, each with a conforming
/// counterpart that records nothing. (M6–M9: ContractMonitorRenderTests.)
@Suite struct ContractMonitorTests {
    // MARK: M1 One result per request id

    @Test func m1_aSecondResultForOneRequestIdIsAViolation() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let first = try runner.apply(Web.result("t1"))
        #expect(first.violations == [])
        let second = try runner.apply(Web.result("t1", "failed"))
        #expect(second.violations == ["M1(t1)"])
        #expect(runner.session.violationCount == 1)
        #expect(runner.viewViolationCount == 1)
        // H8: a second result is stale whatever its status: no reload, no spinner, no header.
        #expect(second.outcome == .ignored(.staleResult))
        #expect(second.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(runner.loadId == 1)
        #expect(runner.recoveryArmed == true)
    }

    @Test func m1_aSecondResultForAnIdTheSessionNeverMadeIsAViolationToo() throws {
        var runner = SessionRunner.make()
        let first = try runner.apply(Web.result("w-unknown"))
        #expect(first.outcome == .ignored(.staleResult))
        #expect(first.violations == [])
        let second = try runner.apply(Web.result("w-unknown"))
        #expect(second.outcome == .ignored(.staleResult))
        #expect(second.violations == ["M1(w-unknown)"])
        #expect(runner.session.violationCount == 1)
        #expect(runner.viewViolationCount == 1)
    }

    @Test func m1_clean_oneResultPerIdRecordsNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        try runner.apply(Web.result("t1"))
        try runner.apply(Web.result("s1", "failed"))  // a recovery reload with a server-made id
        let reloadId = try #require(runner.session.document.requestId)
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.firstBatch(requestId: reloadId))
        try runner.apply(Web.result(reloadId, mode: "hard"))
        try runner.apply(Web.started("w1"))
        try runner.apply(Web.result("w1"))
        #expect(runner.settled == ["t1": "succeeded", "s1": "failed", reloadId: "succeeded"])
        #expect(runner.violations == [])
        #expect(runner.viewViolationCount == 0)

        // A rejected result is not a result: the well-formed one after it is the first (M8 only).
        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        try runner.apply(Web.refreshResult([("schemaVersion", 1), ("requestId", "t2"), ("mode", "soft")]))
        #expect(try runner.apply(Web.result("t2")).violations == [])
        #expect(runner.violations == ["M8(t2)"], "the violation names the id the broken message carried")
        #expect(runner.session.violationCount == 1)
        #expect(runner.viewViolationCount == 1)
    }

    // MARK: M2 refreshStarted without the capability

    @Test func m2_refreshStartedOnAHostWithoutTheCapabilityIsAViolationWhateverItsForm() throws {
        var runner = SessionRunner.make { $0.capabilities = [] }
        let wellFormed = try runner.apply(Web.started("h1"))
        #expect(wellFormed.outcome == .ignored(.capabilityNotAdvertised))
        #expect(wellFormed.violations == ["M2(h1)"])
        let malformed = try runner.apply(Web.refreshStarted([("schemaVersion", 2), ("presentation", "toast")]))
        #expect(malformed.outcome == .ignored(.capabilityNotAdvertised), "unknown to the host, so not rejected")
        #expect(malformed.violations == ["M2(-)"], "M2, not M8")
        #expect(runner.session.violationCount == 2)
        #expect(runner.viewViolationCount == 2)
        // H12: nothing happens on the host.
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
        #expect(runner.entries(.header) == [])
    }

    @Test func m2_aRouteThatAdvertisesNothingByDefaultFlagsItToo() throws {
        var runner = SessionRunner.make { $0.route = "/embed/feed/v1/b42" }
        let applied = try runner.apply(Web.started("h1"))
        #expect(applied.violations == ["M2(h1)"])
        #expect(runner.viewViolationCount == 1)
    }

    @Test func m2_clean_refreshStartedWithTheCapabilityAndOtherEventsWithoutIt() throws {
        var advertising = SessionRunner.make()
        let started = try advertising.apply(Web.started("h1"))
        #expect(started.outcome == .applied)
        #expect(advertising.violations == [])

        var old = SessionRunner.make { $0.capabilities = [] }
        try old.apply(Web.loadingPresentation())
        try old.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try old.apply(Web.firstBatch())
        try old.apply(Web.result("t1"))
        #expect(old.settled == ["t1": "succeeded"])
        #expect(old.violations == [])
        #expect(old.viewViolationCount == 0)
    }

    // MARK: M3 Header feedback for silent requests

    @Test func m3_refreshStartedForAPullATabOrASilentRequestIsAViolation() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        try runner.apply(.lifecycle(.timerTick(requestId: "k1")))
        let pull = try runner.apply(Web.started("p1"))
        #expect(pull.violations == ["M3(p1)"])
        // H10/H12: Web may still command it; the header shows it.
        #expect(pull.outcome == .applied)
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "p1")
        #expect(try runner.apply(Web.started("t1")).violations == ["M3(t1)"])
        #expect(try runner.apply(Web.started("s1")).violations == ["M3(s1)"])
        #expect(try runner.apply(Web.started("k1")).violations == ["M3(k1)"])
        #expect(runner.headerId == "k1")
        #expect(runner.session.violationCount == 4)
        #expect(runner.viewViolationCount == 4)
    }

    @Test func m3_aLateStartForAnAnsweredPullIsAViolationToo() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.result("p1"))
        let late = try runner.apply(Web.started("p1"))
        #expect(late.violations == ["M3(p1)"])
        #expect(runner.viewViolationCount == 1)
    }

    /// M3: a repeated pull hard-reloads with its own id (H10); that reload is a pull too, so
    /// feedback for its id is flagged, before and after its result.
    @Test func m3_refreshStartedForAManualRepeatReloadIdIsAViolation() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(runner.session.document.cause == .manualRepeat)
        let started = try runner.apply(Web.started("p2"))
        #expect(started.violations == ["M3(p2)"])
        #expect(started.outcome == .applied)
        #expect(runner.headerId == "p2")
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.firstBatch(requestId: "p2"))
        #expect(try runner.apply(Web.result("p2", mode: "hard")).violations == [])
        #expect(try runner.apply(Web.started("p2")).violations == ["M3(p2)"])
        #expect(runner.viewViolationCount == 2)
    }

    @Test func m3_clean_foregroundLiveWidgetAndWebMintedStartsRecordNothing() throws {
        var runner = SessionRunner.make()
        try runner.returnFromBackground(at: 6000, requestId: "fg1")
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw1")))
        #expect(runner.pending == ["fg1", "lw1"])
        let foreground = try runner.apply(Web.started("fg1"))
        #expect(foreground.violations == [])
        #expect(runner.headerId == "fg1")
        #expect(try runner.apply(Web.started("lw1")).violations == [])
        #expect(try runner.apply(Web.started("w-cached")).violations == [])
        #expect(runner.headerId == "w-cached")
        #expect(runner.viewViolationCount == 0)
    }

    // MARK: M4 Soft requests answered cancelled or unsupported

    @Test func m4_aSoftRequestAnsweredCancelledOrUnsupportedIsAViolation() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let cancelled = try runner.apply(Web.result("t1", "cancelled"))
        #expect(cancelled.violations == ["M4(t1)"])
        // H7/H9: still a failure with the budget armed: a recovery reload.
        #expect(runner.settled["t1"] == "cancelled")
        #expect(cancelled.entries(.navigation).map { $0.data["cause"] } == ["recovery"])
        #expect(runner.recoveryArmed == false)

        try runner.apply(.gesture(.pull(requestId: "p1")))
        let unsupported = try runner.apply(Web.result("p1", "unsupported"))
        #expect(unsupported.violations == ["M4(p1)"])
        #expect(runner.settled["p1"] == "unsupported")
        #expect(runner.session.violationCount == 2)
        #expect(runner.viewViolationCount == 2)
    }

    @Test func m4_aLateCancelledAnswerIsAViolationToo() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let expiry = try runner.advance(to: 5000)
        #expect(expiry.violations == ["M7(t1)"])
        let late = try runner.apply(Web.result("t1", "cancelled"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(late.violations == ["M4(t1)"])
        #expect(runner.violations == ["M7(t1)", "M4(t1)"])
        #expect(runner.viewViolationCount == 2)
    }

    @Test func m4_clean_succeededFailedAndAHardReloadAnsweredCancelledRecordNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.result("t1", "failed"))
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        try runner.apply(Web.result("s1"))
        try runner.apply(Web.started("w1"))
        try runner.apply(Web.result("w1", "cancelled"))  // Web-minted: Web's own business
        #expect(runner.violations == [])

        try runner.advance(by: 20_000)
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 1000)
        try runner.apply(.gesture(.pull(requestId: "p2")))  // manualRepeat reload carrying p2
        #expect(runner.session.document.requestId == "p2")
        let hard = try runner.apply(Web.result("p2", "cancelled", mode: "hard"))
        #expect(hard.violations == [])
        #expect(runner.settled["p2"] == "cancelled")
        #expect(runner.violations == [])
        #expect(runner.viewViolationCount == 0)
    }

    // MARK: M5 Hard load success before its first visible render

    /// Load 1 released and rendered, then a pull repeated within 10 s: load 2 carries `p2`.
    static func reloadedByRepeatedPull() throws -> SessionRunner {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.firstBatch())
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 1000)
        try runner.apply(.gesture(.pull(requestId: "p2")))
        return runner
    }

    @Test func m5_aHardLoadSucceededBeforeItsFirstRenderIsAViolation() throws {
        var runner = try Self.reloadedByRepeatedPull()
        #expect(runner.loadId == 2)
        #expect(runner.session.document.cause == .manualRepeat)
        let result = try runner.apply(Web.result("p2", mode: "hard"))
        #expect(result.violations == ["M5(p2)"])
        #expect(runner.session.violationCount == 1)
        #expect(runner.viewViolationCount == 1)
        // H7/H11: the id is consumed and the spinner ends succeeded all the same.
        #expect(runner.settled["p2"] == "succeeded")
        #expect(runner.session.document.awaitingResult == false)
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .succeeded)
        #expect(runner.recoveryArmed == true)
    }

    @Test func m5_clean_successAfterFirstBatchOrAfterAnEmptyAllBatchesRecordsNothing() throws {
        var afterFirstBatch = try Self.reloadedByRepeatedPull()
        try afterFirstBatch.apply(Web.loadingPresentation())
        try afterFirstBatch.apply(Web.firstBatch(requestId: "p2"))
        #expect(try afterFirstBatch.apply(Web.result("p2", mode: "hard")).violations == [])
        #expect(afterFirstBatch.viewViolationCount == 0)

        var afterEmpty = try Self.reloadedByRepeatedPull()
        try afterEmpty.apply(Web.loadingPresentation())
        try afterEmpty.apply(Web.allBatches(empty: true, requestId: "p2"))
        #expect(try afterEmpty.apply(Web.result("p2", mode: "hard")).violations == [])
        #expect(afterEmpty.viewViolationCount == 0)

        // A soft request's success before any render is not about a hard load.
        var soft = SessionRunner.make()
        try soft.apply(.gesture(.pull(requestId: "p1")))
        #expect(try soft.apply(Web.result("p1")).violations == [])
        #expect(soft.viewViolationCount == 0)
    }

    /// M1 before M4: a second answer to a soft request, and `cancelled` at that, breaks both;
    /// the stale result settles nothing, so they follow its bridge entry.
    @Test func m1_m4_aSecondCancelledAnswerIsJudgedInRuleOrder() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let first = try runner.apply(Web.result("t1", "failed"))
        #expect(first.violations == [])
        let second = try runner.apply(Web.result("t1", "cancelled"))
        #expect(second.placed == ["input:todayPage.refreshResult(-)", "bridge:todayPage.refreshResult(t1)",
                                  "violation:M1(t1)", "violation:M4(t1)"])
    }
}

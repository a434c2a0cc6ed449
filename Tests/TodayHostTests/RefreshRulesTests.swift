import Testing
@testable import TodayHost

/// H4–H9: native requests, the soft deadline, results and the recovery budget.
@Suite struct RefreshRulesTests {
    @Test func h4_requestIdsAreTheCallersOrDerivedFromSessionAndCounter() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
        try runner.apply(.lifecycle(.socketEvent(requestId: "mine")))
        try runner.apply(.lifecycle(.timerTick(requestId: nil)))
        let ids = runner.refreshRequests.map { $0["requestId"]!.stringValue! }
        #expect(ids == [
            RequestIdFactory.requestId(sessionId: "s1", counter: 1), "mine",
            RequestIdFactory.requestId(sessionId: "s1", counter: 2),
        ])
        // Replaying the same inputs yields the same ids.
        var replay = SessionRunner.make()
        try replay.apply(.lifecycle(.tabActivated(requestId: nil)))
        try replay.apply(.lifecycle(.socketEvent(requestId: "mine")))
        try replay.apply(.lifecycle(.timerTick(requestId: nil)))
        #expect(replay.timeline == runner.timeline)
    }

    @Test func h4_hostMadeReloadsDeriveTheirIdsToo() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.timerTick(requestId: "t1")))
        try runner.advance(by: 5000)
        let reloadId = RequestIdFactory.requestId(sessionId: "s1", counter: 1)
        #expect(runner.session.document.requestId == reloadId)
        #expect(runner.session.document.url == "/embed/feeds/v1?language=en&uid=u1&requestId=\(reloadId)")
    }

    @Test func h4_anIdSeenInAnyRoleIsInvalidAsACallersId() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("web-1"))
        try runner.apply(.gesture(.pull(requestId: "p2")))  // a reload id
        let before = runner.session
        for used in ["p1", "p2", "web-1"] {
            #expect(throws: InputError.invalidField("requestId", "\(used) was already used by this session")) {
                try runner.apply(.lifecycle(.tabActivated(requestId: used)))
            }
        }
        #expect(throws: InputError.invalidField("requestId", "must be a non-empty string")) {
            try runner.apply(.gesture(.pull(requestId: "")))
        }
        #expect(runner.session == before)
    }

    @Test func h4_aCallersIdThatMadeNoRequestStaysUnused() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 1000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg")))  // under the threshold: no request
        #expect(runner.refreshRequests.isEmpty)
        try runner.apply(.lifecycle(.tabActivated(requestId: "fg")))
        #expect(runner.pending == ["fg"])
    }

    @Test func h4_reasonsBySourceAndSilentLegacyRequestsHaveNoReasonKey() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "a")))
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "b")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "c")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "d")))
        try runner.apply(.lifecycle(.timerTick(requestId: "e")))
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 5000)
        try runner.apply(.lifecycle(.foreground(requestId: "f")))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "a", "reason": "user_pull"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "b", "reason": "live_widget_created"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "c", "reason": "tab_activated"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "d"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "e"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "f", "reason": "app_foreground"],
        ].map { $0 as JSON })
    }

    @Test func h5_requestsJoiningANonEmptySetShareTheDeadline() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        #expect(runner.session.refresh.deadline?.dueAtMs == 6000)
        try runner.advance(to: 4000)
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        #expect(runner.session.refresh.deadline?.dueAtMs == 6000)
        try runner.apply(Web.result("t1"))
        try runner.apply(Web.result("s1"))
        #expect(runner.session.refresh.deadline == nil)
        // An empty set arms a fresh deadline for the next request.
        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        #expect(runner.session.refresh.deadline?.dueAtMs == 9000)
    }

    @Test func h6_expiryTimesOutEveryPendingRequestThenReloadsOnce() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.timerTick(requestId: "t2")))
        let seq = runner.lastSeq
        try runner.advance(by: 5000)
        let entries = runner.timeline.filter { $0.seq > seq }
        // Each unanswered request is also a breach of Web's side (M7).
        #expect(entries.map(\.kind) == [.input, .watchdog, .request, .violation, .request, .violation, .navigation])
        #expect(runner.settled == ["t1": "timedOut", "t2": "timedOut"])
        #expect(entries[6].data["cause"] == "recovery")
        #expect(runner.session.recovery.armed == false)
    }

    @Test func h6_withoutABudgetOwnedUIsSettle() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r0")))  // spends the budget
        try runner.apply(Web.result("r0", "failed", mode: "hard"))  // budget spent: no reload
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 5000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg")))
        try runner.apply(Web.started("fg"))
        try runner.advance(by: 5000)
        #expect(runner.settled["fg"] == "timedOut")
        #expect(runner.header == .hidden)
        #expect(runner.navigations.count == 2, "no reload after the expiry")
    }

    @Test func h7_resultConsumesItsRequestAndSettlesOwnedUIs() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        let applied = try runner.apply(Web.result("t1"))
        #expect(applied.entries.map(\.kind) == [.input, .bridge, .request, .header])
        #expect(applied.entries[2].data == ["outcome": "succeeded", "reason": "tab_activated"])
        #expect(runner.header == .updated)
        #expect(runner.pending.isEmpty)
        #expect(runner.session.refresh.deadline == nil)
        #expect(applied.resolution == .null)
    }

    @Test func h7_unknownStatusSettlesWithoutReloadOrRearm() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r0")))  // budget spent
        try runner.apply(.gesture(.pull(requestId: "p1")))  // re-arms
        try runner.apply(Web.result("p1", "skipped"))
        #expect(runner.session.pull.lastOutcome == .unknown)
        #expect(runner.settled["p1"] == "unknown")
        #expect(runner.navigations.count == 2)
        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))
        // The budget spent by the termination was re-armed by the pull, not by the odd status.
        #expect(runner.navigations.count == 3)
        #expect(runner.session.recovery.armed == false)
    }

    @Test func h8_staleResultsChangeNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let before = runner.session
        let unknown = try runner.apply(Web.result("nobody-asked", "failed"))
        #expect(unknown.outcome == .ignored(.staleResult))
        #expect(unknown.entries.map(\.kind) == [.input, .bridge])
        try runner.apply(Web.result("t1"))
        let second = try runner.apply(Web.result("t1", "failed"))
        #expect(second.outcome == .ignored(.staleResult))
        #expect(runner.navigations.count == 1)
        #expect(runner.session.recovery == before.recovery)
    }

    @Test func h9_oneAutomaticReloadUntilRearmed() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.result("t1", "failed"))
        #expect(runner.navigations.last?.data["cause"] == "recovery")
        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        try runner.apply(Web.result("t2", "cancelled"))
        #expect(runner.navigations.count == 2, "budget spent: no second reload")
        try runner.apply(.lifecycle(.tabActivated(requestId: "t3")))
        try runner.apply(Web.result("t3", "succeeded"))  // re-arms
        try runner.apply(.lifecycle(.tabActivated(requestId: "t4")))
        try runner.apply(Web.result("t4", "unsupported"))
        #expect(runner.navigations.count == 3)
    }

    @Test func h9_webMintedResultsNeitherRearmNorRecover() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("cache-1"))
        try runner.apply(Web.result("cache-1", "failed"))
        #expect(runner.navigations.count == 1)
        #expect(runner.header == .failed)
        #expect(runner.session.recovery.armed)

        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))  // spends it
        try runner.apply(Web.started("cache-2"))
        try runner.apply(Web.result("cache-2", "succeeded"))
        #expect(runner.session.recovery.armed == false)
    }

    @Test func h9_headerShowsFailedOnlyWhenNoReloadFollows() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        let reloading = try runner.apply(Web.result("t1", "failed"))
        #expect(reloading.entries.filter { $0.kind == .header }.map(\.data) == [["from": "refreshing", "to": "hidden"]])
        #expect(runner.header == .hidden)

        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        try runner.apply(Web.started("t2"))
        try runner.apply(Web.result("t2", "failed"))
        #expect(runner.header == .failed)
    }
}

import Testing
@testable import TodayHost

/// H19 account switch and H20 teardown.
@Suite struct SessionEndRulesTests {
    // MARK: H19 Account switch

    @Test func h19_accountSwitchReloadsForTheNewUidAndEndsTheSpinner() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 1000)
        let switched = try runner.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(switched.outcome == .applied)
        #expect(switched.trace == ["input:accountSwitch", "analytics:page_end", "request:cancelled", "header:hidden",
                                   "navigation:accountSwitch", "pull:idle", "analytics:page_view"])
        #expect(switched.entries(.analytics).map(\.data) == [
            ["event": "page_end", "properties": ["uid": "u1"]],
            ["event": "page_view", "properties": ["uid": "u2"]],
        ])
        let navigation = switched.entries(.navigation)[0]
        #expect(navigation.data == ["loadId": 2, "url": "/embed/feeds/v1?language=en&uid=u2", "cause": "accountSwitch"])
        #expect(navigation.requestId == nil)
        #expect(switched.entries(.pull)[0].data == ["state": "idle", "outcome": "cancelled"])
        #expect(runner.session.view["uid"] == "u2")
        #expect(runner.session.document.requestId == nil)
        #expect(runner.settled["p1"] == "cancelled")
        #expect(runner.pull == .idle)
        #expect(runner.timers == [])
    }

    @Test func h19_accountSwitchInTheBackgroundEmitsNoAnalytics() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        let switched = try runner.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(switched.trace == ["input:accountSwitch", "navigation:accountSwitch"])
        #expect(runner.session.view["app"]?["state"] == "background")
    }

    @Test func h19_accountSwitchLeavesTheRecoveryBudgetAsItWas() throws {
        var spent = SessionRunner.make()
        try spent.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        #expect(spent.recoveryArmed == false)
        try spent.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(spent.recoveryArmed == false)
        // Spent stays spent: the next failure reloads nothing.
        try spent.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try spent.apply(Web.result("t1", "failed"))
        #expect(spent.loadId == 3)

        var armed = SessionRunner.make()
        try armed.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(armed.recoveryArmed == true)
    }

    @Test func h19_accountSwitchWithAnEmptyUidIsInvalid() throws {
        var runner = SessionRunner.make()
        let refusal = runner.refused(.lifecycle(.accountSwitch(uid: "")))
        let error = try #require(refusal)
        #expect(invalidField(error) == "uid")
        #expect(runner.session.view["uid"] == "u1")
        #expect(runner.loadId == 1)
    }

    // MARK: H20 Teardown

    @Test func h20_teardownSettlesEveryUICancelsEveryTimerAndClosesTheSession() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 500)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 2000)
        #expect(runner.timers == ["softRefreshDeadline(-)@5000", "pullWatchdog(p1)@12000", "headerWatchdog(h1)@12000"])
        #expect(runner.session.version == 6)

        let teardown = try runner.apply(.teardown)
        #expect(teardown.outcome == .applied)
        #expect(teardown.trace == ["input:teardown", "header:hidden", "request:cancelled", "request:cancelled",
                                   "pull:idle", "analytics:page_end"])
        #expect(teardown.entries[0].data == ["input": ["type": "teardown"], "outcome": "applied", "via": "lifecycle"])
        #expect(teardown.entries(.request).map(\.requestId) == ["p1", "t1"])
        #expect(teardown.entries(.pull)[0].data == ["state": "idle", "outcome": "cancelled"])
        #expect(teardown.entries(.analytics)[0].data == ["event": "page_end", "properties": ["uid": "u1"]])
        #expect(runner.session.version == 7)
        #expect(runner.timers == [])
        #expect(runner.session.view["status"] == "closed")

        // Still readable; every later input is refused with session_closed.
        let seq = runner.lastSeq
        #expect(runner.refused(.gesture(.pull(requestId: nil))) == .sessionClosed)
        #expect(runner.refused(.clock(.advanceBy(20000))) == .sessionClosed)
        #expect(runner.refused(Web.result("t1")) == .sessionClosed)
        #expect(runner.refused(.teardown) == .sessionClosed)
        #expect(runner.lastSeq == seq)
        #expect(runner.session.version == 7)
        #expect(runner.session.view["header"] == ["state": "hidden", "requestId": nil])
        #expect(runner.session.view["pull"]?["lastOutcome"] == "cancelled")
    }

    /// H20: the document's own reload id (here a repeated pull's, H10) is open too, and
    /// teardown settles it `cancelled`: nothing stays open in the report.
    @Test func h20_teardownCancelsTheDocumentsOwnReloadIdAfterThePendingRequests() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(runner.session.document.ownedRequestId == "p2")
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let teardown = try runner.apply(.teardown)
        #expect(teardown.entries(.request).map(\.requestId) == ["t1", "p2"])
        #expect(teardown.entries(.request).map { $0.data["outcome"] } == ["cancelled", "cancelled"])
        #expect(runner.ledger.records["p2"]?.outcome == .cancelled)
        #expect(runner.ledger.records["p2"]?.answeredAtMs == nil)
        #expect(runner.session.document.ownedRequestId == nil)
    }

    @Test func h20_teardownInTheBackgroundEmitsNoPageEnd() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        let teardown = try runner.apply(.teardown)
        #expect(teardown.trace == ["input:teardown"])
        #expect(runner.session.isClosed)
    }
}

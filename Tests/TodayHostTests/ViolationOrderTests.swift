import Testing
@testable import TodayHost

/// Where violation entries stand in the timeline (docs/RULES.md#the-contract-monitor): each
/// follows the entry it judges, and several from one input come in rule order. The other
/// monitor tests read violations apart from the rest; these read them in place.
@Suite struct ViolationOrderTests {
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

extension Applied {
    /// Every entry this input appended, violations included, as `kind:type(requestId)`; a
    /// violation reads as `violation:` and its `violationLine`, so a malformed one shows.
    fileprivate var placed: [String] {
        entries.map { entry in
            entry.kind == .violation ? "violation:\(entry.violationLine)" : "\(entry.line)(\(entry.requestId ?? "-"))"
        }
    }
}

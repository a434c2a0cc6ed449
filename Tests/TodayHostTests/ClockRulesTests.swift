import Testing
@testable import TodayHost

/// C1–C4: the session clock and its timers.
@Suite struct ClockRulesTests {
    @Test func c1_virtualClockStartsAtZeroAndMovesOnlyWhenAdvanced() throws {
        var runner = SessionRunner.make()
        #expect(runner.now == 0)
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.lifecycle(.background))
        try runner.apply(Web.result("p1"))
        #expect(runner.now == 0)
        try runner.advance(by: 250)
        #expect(runner.now == 250)
        try runner.advance(to: 400)
        #expect(runner.now == 400)
    }

    @Test func c1_wallClockFiresOverdueTimersInDueOrderWithLateness() throws {
        var runner = SessionRunner.make { $0.clock = .wall }
        try runner.apply(.gesture(.pull(requestId: "p1")))  // deadline 5000, pull watchdog 12000
        #expect(throws: InputError.clockNotVirtual) { try runner.advance(by: 10) }
        #expect(runner.session.version == 2)

        // The server was down until 20 s: both timers fire at once, in due order.
        let caughtUpOrNil = runner.catchUp(toWallClock: 20_000)
        let caughtUp = try #require(caughtUpOrNil)
        let watchdogs = caughtUp.entries.filter { $0.kind == .watchdog }
        #expect(watchdogs.map(\.type) == ["softRefreshDeadline", "pullWatchdog"])
        #expect(watchdogs.map(\.atMs) == [5000, 12_000])
        #expect(watchdogs.map { $0.data["lateMs"] } == [.int(15_000), .int(8000)])
        #expect(runner.now == 20_000)
        #expect(runner.session.version == 2, "catching up is not an input")
        let again = runner.catchUp(toWallClock: 20_000)
        #expect(again == nil)
    }

    @Test func c2_advanceFiresDueTimersInOrderAtTheirDueTimes() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("w1"))
        try runner.advance(by: 3000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let applied = try runner.advance(to: 30_000)
        let fired = applied.entries.filter { $0.kind == .watchdog }
        // The soft deadline (5000) consumes both requests and reloads; the spinner follows the
        // reload and keeps its watchdog (12000); the header was cleared by the reload.
        #expect(fired.map(\.type) == ["softRefreshDeadline", "pullWatchdog"])
        #expect(fired.map(\.atMs) == [5000, 12_000])
        #expect(runner.now == 30_000)
        #expect(runner.session.watchdogs.isEmpty)
    }

    @Test func c2_timersArmedInOneStepAndDueTogetherFireInKindOrder() throws {
        var runner = SessionRunner.make {
            $0.timing.pullWatchdogMs = 5000
            $0.timing.softRefreshDeadlineMs = 5000
        }
        try runner.apply(.gesture(.pull(requestId: "p1")))
        #expect(runner.session.watchdogs.map(\.kind) == [.softRefreshDeadline, .pullWatchdog])
        let applied = try runner.advance(to: 5000)
        #expect(applied.entries.filter { $0.kind == .watchdog }.map(\.type) == ["softRefreshDeadline", "pullWatchdog"])
    }

    @Test func c2_tiesAcrossStepsFireInTheOrderTheyWereArmed() throws {
        // Kind order alone would fire the pull watchdog first; arming order fires the header's.
        var runner = SessionRunner.make { $0.timing.softRefreshDeadlineMs = 20_000 }
        try runner.apply(Web.started("w1"))  // header watchdog due 12000, armed in step 2
        try runner.apply(.gesture(.pull(requestId: "p1")))  // pull watchdog due 12000, armed in step 3
        #expect(runner.session.watchdogs.map(\.kind) == [.headerWatchdog, .pullWatchdog, .softRefreshDeadline])
        let applied = try runner.advance(to: 12_000)
        #expect(applied.entries.filter { $0.kind == .watchdog }.map(\.type) == ["headerWatchdog", "pullWatchdog"])
    }

    @Test func c2_toNextTimerFiresOnlyTheEarliestAndSaysNoTimerWhenIdle() throws {
        var runner = SessionRunner.make()
        let idle = try runner.toNextTimer()
        #expect(idle.outcome == .ignored(.noTimer))
        #expect(idle.entries.map(\.kind) == [.input])
        #expect(runner.session.version == 2)

        try runner.apply(.gesture(.pull(requestId: "p1")))
        let next = try runner.toNextTimer()
        #expect(runner.now == 5000)
        #expect(next.entries.filter { $0.kind == .watchdog }.map(\.type) == ["softRefreshDeadline"])
        #expect(runner.session.watchdogs.map(\.kind) == [.pullWatchdog])
    }

    @Test func c2_runUntilIdleFiresEverythingAndStopsAtItsCap() throws {
        var capped = SessionRunner.make()
        try capped.apply(.gesture(.pull(requestId: "p1")))
        let stopped = try capped.runUntilIdle(cap: 1)
        #expect(stopped.outcome == .appliedWithNote("loopCap"))
        #expect(stopped.entries.first?.data["reason"] == "loopCap")
        #expect(capped.session.watchdogs.count == 1)

        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        let idle = try runner.runUntilIdle()
        #expect(idle.outcome == .applied)
        #expect(runner.session.watchdogs.isEmpty)
        #expect(runner.now == 12_000)
    }

    @Test func c2_invalidClockMovesChangeNothing() throws {
        var runner = SessionRunner.make()
        try runner.advance(by: 100)
        let before = runner.session
        #expect(throws: InputError.invalidField("advanceMs", "must be a non-negative integer")) { try runner.advance(by: -1) }
        #expect(throws: InputError.invalidField("toMs", "must not be before nowMs (100)")) { try runner.advance(to: 99) }
        #expect(runner.session == before)

        let noop = try runner.advance(by: 0)
        #expect(noop.outcome == .applied)
        #expect(noop.entries.map(\.kind) == [.input])
        #expect(runner.now == 100)
    }

    @Test func c3_pendingTimersAreStateAndCancelWithIt() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("w1"))
        #expect(runner.session.watchdogs.map(\.json) == [
            ["kind": "softRefreshDeadline", "requestId": nil, "dueAtMs": 5000],
            ["kind": "pullWatchdog", "requestId": "p1", "dueAtMs": 12_000],
            ["kind": "headerWatchdog", "requestId": "w1", "dueAtMs": 12_000],
        ])
        try runner.apply(Web.result("p1"))
        // The last pending request consumed: the deadline is gone; the spinner ended: its watchdog too.
        #expect(runner.session.watchdogs.map(\.kind) == [.headerWatchdog])
        #expect(runner.session.view["watchdogs"] == .array(runner.session.watchdogs.map(\.json)))
    }

    @Test func c4_timingDefaultsAndPerSessionOverrides() throws {
        let defaults = SessionRunner.make()
        #expect(defaults.session.view["timing"] == [
            "pullWatchdogMs": 12_000, "headerWatchdogMs": 12_000, "softRefreshDeadlineMs": 5000,
            "headerSettleMs": 1000, "foregroundThresholdMs": 5000, "manualRefreshWindowMs": 10_000,
        ])

        var custom = SessionRunner.make {
            $0.timing.softRefreshDeadlineMs = 700
            $0.timing.pullWatchdogMs = 900
        }
        try custom.apply(.gesture(.pull(requestId: "p1")))
        #expect(custom.session.watchdogs.map(\.dueAtMs) == [700, 900])

        var config = SessionConfig(uid: "u1")
        config.timing.headerSettleMs = 0
        #expect(throws: InputError.invalidField("timing.headerSettleMs", "must be a positive integer")) {
            try SessionRunner(config: config)
        }
    }
    /// C1: a move stops at the clock's end less the session's longest timer, so a timer an input
    /// arms there is still due within the end (issue 23, item 3).
    @Test func c1_theClockStopsShortOfItsEndByTheLongestTimerAndAMovePastChangesNothing() throws {
        var runner = SessionRunner.make()
        let latest = clockCeilingMs - 12_000
        #expect(runner.session.config.timing.latestMoveMs == latest)
        try runner.advance(by: latest)
        #expect(runner.now == latest)
        let version = runner.session.version
        // Once overflowed Int64 (issue 12, item 1): refused, the session as it was.
        #expect(throws: InputError.invalidField("advanceMs", "would move the clock from \(latest) ms past \(latest) ms: the clock's end (\(clockCeilingMs) ms) less this session's longest timer (pullWatchdogMs, 12000 ms), so that every timer an input arms stays within reach")) {
            try runner.advance(by: clockCeilingMs)
        }
        #expect(throws: InputError.self) { try runner.advance(by: 1) }
        #expect(throws: InputError.self) { try runner.advance(to: latest + 1) }
        #expect(runner.now == latest)
        #expect(runner.session.version == version)
        try runner.apply(.gesture(.pull(requestId: "p1")))
        #expect(runner.session.watchdogs.map(\.dueAtMs) == [latest + 5000, clockCeilingMs])
        try runner.runUntilIdle()
        #expect(runner.now == clockCeilingMs, "the timer the input armed was within reach")
    }

    @Test func c1_theLongestTimerIsAnArmedOneNotAThreshold() {
        var timing = Timing()
        timing.foregroundThresholdMs = 1_000_000
        timing.manualRefreshWindowMs = 2_000_000
        #expect(timing.longestTimer.name == "pullWatchdogMs")
        timing.headerSettleMs = 50_000
        #expect(timing.longestTimer == ("headerSettleMs", 50_000))
        #expect(timing.latestMoveMs == clockCeilingMs - 50_000)
        timing.softRefreshDeadlineMs = clockCeilingMs
        #expect(timing.latestMoveMs == 0)
    }

    @Test func c2_aTimerAsLongAsTheClockLeavesNoRoomButStaysReachableAndItsArmingNeverTraps() throws {
        var runner = SessionRunner.make { $0.timing.pullWatchdogMs = clockCeilingMs }
        #expect(throws: InputError.self) { try runner.advance(by: 10) }
        try runner.apply(.gesture(.pull(requestId: "p1")))  // pull watchdog due at 9e15
        #expect(runner.session.watchdogs.map(\.dueAtMs) == [5000, clockCeilingMs])
        try runner.toNextTimer()  // the soft deadline
        try runner.runUntilIdle()
        #expect(runner.now == clockCeilingMs)
        // Only firing a timer takes the clock past the latest move; a timer an input arms there
        // may fall past the end, and a move to it is refused whole.
        try runner.apply(.gesture(.pull(requestId: "p2")))
        let before = runner.session
        #expect(throws: InputError.self) { try runner.toNextTimer() }
        #expect(throws: InputError.self) { try runner.runUntilIdle() }
        #expect(runner.session == before, "a refused move fires nothing")
        // A clock reading from before the ceiling existed: arming saturates instead of trapping.
        #expect(Instant(ms: .max - 5, step: 1).deadline(after: clockCeilingMs).dueAtMs == .max)
    }
}

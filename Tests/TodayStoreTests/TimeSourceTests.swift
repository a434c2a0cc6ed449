import Foundation
import Testing
import TodayTestSupport
@testable import TodayStore

/// What the store times runs on the clock it is given (issue 46, item 5): a degraded storage's
/// probes and work put off with `after` come when a test's `ManualTime` is moved, not while it
/// waits.
@Suite struct TimeSourceTests {
    /// `/readyz` and the background jobs probe a degraded storage a second after it failed, then
    /// at most once a second: seconds of the storage's clock.
    @Test func aDegradedStorageIsProbedOnceASecondOfItsClock() {
        let clock = ManualTime()
        let health = StorageHealth(path: nil, time: clock)
        #expect(!health.shouldProbe(), "a healthy storage is not probed")
        health.unreachable("the database is down")
        #expect(!health.shouldProbe(), "probed at once after it failed")
        clock.move(by: 999)
        #expect(!health.shouldProbe(), "probed within a second of failing")
        clock.move(by: 1)
        #expect(health.shouldProbe(), "not probed a second after it failed")
        #expect(!health.shouldProbe(), "probed twice in one second")
        clock.move(by: 1_000)
        #expect(health.shouldProbe(), "not probed a second after the last probe")
        health.committed()
        clock.move(by: 1_000)
        #expect(!health.shouldProbe(), "a storage back to ok is not probed")
    }

    /// `after` on a manual clock: the work waits for a move past its delay, then runs on its queue.
    @Test func workPutOffWithAfterRunsWhenTheClockIsMovedPastItsDelay() async {
        let clock = ManualTime()
        let ran = Flag()
        clock.after(2, on: .global()) { ran.set() }
        #expect(clock.pending == 1)
        clock.move(by: 1_999)
        #expect(clock.pending == 1 && !ran.isSet, "the work ran before its delay")
        clock.move(by: 1)
        #expect(clock.pending == 0, "the work was not handed to its queue at its delay")
        #expect(await eventually { ran.isSet }, "the work never ran")
        let now = Flag()
        clock.after(0, on: .global()) { now.set() }
        #expect(clock.pending == 0)
        #expect(await eventually { now.isSet }, "work with no delay waited for a move")
    }

    /// `after` on this machine's clock runs too (as `asyncAfter`).
    @Test func workPutOffWithAfterRunsOnTheSystemClock() async {
        let ran = Flag()
        SystemTime().after(0.01, on: .global()) { ran.set() }
        #expect(await eventually { ran.isSet }, "the work never ran")
    }
}

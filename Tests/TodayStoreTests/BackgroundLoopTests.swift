import Foundation
import Testing
import TodayTestSupport
@testable import TodayStore

/// A background job whose work failed waits out a growing backoff (issue 12, item 8); once the
/// cause is gone (`StorageHealth` back to ok) `retryNow` ends that wait, so a wall timer that
/// fell due while the database was down fires then, not up to 30 s later (issue 14, item 3).
@Suite struct BackgroundLoopTests {
    final class Calls: @unchecked Sendable {
        let lock = NSLock()
        var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
        var value: Int { lock.withLock { count } }
    }

    @Test func retryNowEndsTheBackoffWait() async throws {
        let calls = Calls()
        // The first retry would wait an hour, longer than any wait below: a second call can only be
        // the asked-for one. (At 120 s, a suite that kept this task off the cooperative pool for two
        // minutes let the backoff end and the second call come before the first was seen: the
        // fresh-clone run of ba5f85b under load 12.)
        let loop = BackgroundLoop(name: "test-loop", nextWake: { nil }, firstRetry: 3600) {
            if calls.next() == 1 { throw StoreError.storageUnavailable("down") }
        }
        loop.start()
        loop.poke()
        #expect(await eventually { calls.value == 1 }, "the first try ran and failed")
        loop.retryNow()
        #expect(await eventually { calls.value == 2 }, "retried when asked, not after the hour's backoff")
        loop.stop()
    }

    /// The backoff on a clock the test moves (issue 24, item 3): moved by exactly the retry
    /// delay, the loop retries at once. Compared another way than the loop compares, the clock's
    /// own wait once disagreed at that very millisecond for about a third of starting readings
    /// (the loop then spun holding its lock, or waited for another move): so a run of readings,
    /// each a fresh loop, with the work failing once and then succeeding.
    @Test(arguments: [Int64(1_767_225_600_000), 1_767_225_600_001, 1_767_225_600_003, 1_767_225_600_007,
                      1_767_225_600_013, 1_767_225_600_029, 1_767_225_600_101, 1_800_000_000_123])
    func aFailedJobIsRetriedWhenTheTestsClockReachesItsBackoff(_ startMs: Int64) async throws {
        let clock = ManualTime(startMs: startMs)
        let calls = Calls()
        let loop = BackgroundLoop(name: "test-loop", nextWake: { nil }, firstRetry: 0.1, time: clock) {
            if calls.next() == 1 { throw StoreError.storageUnavailable("down") }
        }
        loop.start()
        loop.poke()
        #expect(await eventually { calls.value == 1 && clock.waits == 1 }, "the first try failed and its backoff waits on the clock")
        clock.move(by: 100)
        #expect(await eventually { calls.value == 2 }, "retried when the clock reached the 100 ms backoff")
        loop.stop()
    }
}

import Foundation
import TodayHost

/// Real time for the work that runs in the background: the wall-clock scheduler and the `wall`
/// sessions' clocks (C1), idle expiry and retention, a background loop's retry backoff. The
/// server runs on `SystemTime`; a test passes a `ManualTime`, which moves only when the test
/// moves it and wakes every loop waiting on it, so the test moves time instead of racing it
/// (as a session's virtual clock does for the rules). The server and the store read time only
/// through one of these (`Scripts/check-clock-reads`): this file is the one place that reads
/// this machine's clock.
package protocol TimeSource: Sendable {
    /// Now, as a Unix time in milliseconds.
    func nowMs() -> Millis

    /// Now, as a date.
    var now: Date { get }

    /// Whether this source reads `deadline` or later: the one comparison a caller and `wait` both
    /// make, so they never disagree at the deadline (the caller waiting again while `wait`
    /// returns at once would spin).
    func hasReached(_ deadline: Date) -> Bool

    /// Waits on `condition`, which the caller holds (as `NSCondition.wait(until:)`), until this
    /// source reads `deadline` or the condition is signalled; `false` when the deadline came.
    func wait(_ condition: NSCondition, until deadline: Date) -> Bool

    /// A reading in ms of a clock that never jumps (this machine's monotonic clock; a manual
    /// clock's own reading): what a wait of a fixed length (a PostgreSQL statement's deadline)
    /// is measured on, so a system clock stepped by NTP neither ends it early nor stretches it.
    func steadyMs() -> Millis

    /// `steadyMs` in nanoseconds: what a deadline kept to the nanosecond is measured on (the
    /// request deadlines).
    func steadyNs() -> UInt64

    /// Runs `work` on `queue` once this source reads `delay` seconds from now (as
    /// `DispatchQueue.asyncAfter`; a manual clock runs it when moved past).
    func after(_ delay: TimeInterval, on queue: DispatchQueue, execute work: @escaping @Sendable () -> Void)

    /// How long, in ms, a `poll` on a socket may sleep before this source is read again on the
    /// way to the steady reading `end` (`0`: reached). A `poll` sleeps on this machine's time
    /// and sees nothing of a manual clock's moves, so a wait that ends at a deadline reads the
    /// source after each sleep.
    func pollTimeoutMs(untilSteadyMs end: Millis) -> Int32
}

extension TimeSource {
    /// `nowMs` as a date.
    package var now: Date { Date(unixMs: nowMs()) }

    package func hasReached(_ deadline: Date) -> Bool { now >= deadline }
}

/// This machine's clock.
package struct SystemTime: TimeSource {
    package init() {}

    package func nowMs() -> Millis { Millis((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Not rounded to the millisecond: a timed wait that ended is past its deadline by this
    /// reading too, so a loop comparing the two never spins through the rest of a millisecond.
    package var now: Date { Date() }

    package func wait(_ condition: NSCondition, until deadline: Date) -> Bool {
        condition.wait(until: deadline)
    }

    /// Milliseconds since boot (`CLOCK_MONOTONIC`, through Dispatch's uptime).
    package func steadyMs() -> Millis { Millis(steadyNs() / 1_000_000) }

    package func steadyNs() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    package func after(_ delay: TimeInterval, on queue: DispatchQueue, execute work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }

    /// The time left.
    package func pollTimeoutMs(untilSteadyMs end: Millis) -> Int32 {
        let (left, overflow) = end.subtractingReportingOverflow(steadyMs())
        guard !overflow, left > 0 else { return overflow ? Int32.max : 0 }
        return Int32(clamping: left)
    }
}

/// How long something took, on this machine's monotonic clock, for a metric or the request log:
/// the duration of real work, which no manual clock stands for and nothing waits on or decides
/// by (a test's `ManualTime` would make every duration 0).
package struct Stopwatch: Sendable {
    private let startedNs = DispatchTime.now().uptimeNanoseconds

    package init() {}

    /// Nanoseconds since this stopwatch was made.
    package var elapsedNs: UInt64 { DispatchTime.now().uptimeNanoseconds - startedNs }
}

extension Date {
    /// The date `ms` milliseconds after the Unix epoch: a Unix time (a due time, an expiry, a
    /// reading of a `TimeSource`) as a date, made here so that the date of a reading is never
    /// confused with a reading of the clock.
    package init(unixMs ms: Millis) {
        self.init(timeIntervalSince1970: Double(ms) / 1000)
    }
}

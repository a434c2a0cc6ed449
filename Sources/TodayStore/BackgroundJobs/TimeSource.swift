import Foundation
import TodayHost

/// Real time for the work that runs in the background: the wall-clock scheduler and the `wall`
/// sessions' clocks (C1), idle expiry and retention, a background loop's retry backoff. The
/// server runs on `SystemTime`; a test passes a `ManualTime`, which moves only when the test
/// moves it and wakes every loop waiting on it, so the test moves time instead of racing it
/// (as a session's virtual clock does for the rules).
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

    /// How long, in ms, a `poll` on a socket may sleep before this source is read again on the
    /// way to the steady reading `end` (`0`: reached). A `poll` sleeps on this machine's time
    /// and sees nothing of a manual clock's moves, so a wait that ends at a deadline reads the
    /// source after each sleep.
    func pollTimeoutMs(untilSteadyMs end: Millis) -> Int32
}

extension TimeSource {
    /// `nowMs` as a date.
    package var now: Date { Date(timeIntervalSince1970: Double(nowMs()) / 1000) }

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
    package func steadyMs() -> Millis { Millis(DispatchTime.now().uptimeNanoseconds / 1_000_000) }

    /// The time left.
    package func pollTimeoutMs(untilSteadyMs end: Millis) -> Int32 {
        let (left, overflow) = end.subtractingReportingOverflow(steadyMs())
        guard !overflow, left > 0 else { return overflow ? Int32.max : 0 }
        return Int32(clamping: left)
    }
}

/// Time that moves only when the test moves it (`move(by:)`), for tests of what runs in the
/// background: whatever waits on it (a background loop's next wake) wakes at each move and
/// finds out whether its time came, so a test moves the clock past a due time and waits for
/// the effect, with no real time in between to race.
package final class ManualTime: TimeSource, @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var ms: Millis
    private var waiting: [ObjectIdentifier: (condition: NSCondition, count: Int)] = [:]
    private var begun = 0

    /// `startMs`: the first reading (by default this machine's clock now; any value will do,
    /// since nothing waits on real time).
    package init(startMs: Millis = SystemTime().nowMs()) {
        ms = startMs
    }

    package func nowMs() -> Millis { locked { ms } }

    /// How many waits on this clock are in progress (a test knows a wait began by it).
    package var waits: Int { locked { waiting.values.reduce(0) { $0 + $1.count } } }

    /// How many waits on this clock began, ever: a test that moved the clock knows a loop has
    /// looked at the new time and gone back to waiting when this grows.
    package var waitsBegun: Int { locked { begun } }

    /// Moves the clock by `delta` ms (negative: back, as a system clock stepped by NTP does) and
    /// wakes everything waiting on it.
    package func move(by delta: Millis) {
        let conditions = locked {
            ms += delta
            return waiting.values.map(\.condition)
        }
        for condition in conditions {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }

    package func wait(_ condition: NSCondition, until deadline: Date) -> Bool {
        let key = ObjectIdentifier(condition)
        let due = locked {
            let due = reached(deadline)
            if !due {
                waiting[key] = (condition, (waiting[key]?.count ?? 0) + 1)
                begun += 1
            }
            return due
        }
        if due { return false }
        // Woken by a move (which takes `condition`'s lock to broadcast, so it cannot slip in
        // between the reading above and this wait) or by the caller's own signal.
        condition.wait()
        return locked {
            if let entry = waiting[key] {
                waiting[key] = entry.count > 1 ? (entry.condition, entry.count - 1) : nil
            }
            return !reached(deadline)
        }
    }

    /// A `poll` cannot be woken by `move`, so it sleeps a few ms at a time and reads the clock
    /// again: a test that moves the clock past the deadline sees the wait end within a slice.
    package func pollTimeoutMs(untilSteadyMs end: Millis) -> Int32 {
        steadyMs() >= end ? 0 : Self.pollSliceMs
    }

    /// The clock's own reading: it never jumps but when moved.
    package func steadyMs() -> Millis { nowMs() }

    /// How long a `poll` sleeps between two readings of this clock.
    static let pollSliceMs: Int32 = 5

    /// In whole milliseconds: a deadline made as a reading plus a delay (`now + 0.1`) is
    /// reached when the clock has moved by that delay, whatever the floating point of the two
    /// dates makes of it.
    package func hasReached(_ deadline: Date) -> Bool { locked { reached(deadline) } }

    /// `hasReached` for a caller already holding `lock`.
    private func reached(_ deadline: Date) -> Bool {
        ms >= Millis((deadline.timeIntervalSince1970 * 1000).rounded())
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

import Foundation
import TodayHost

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
    /// Work for `after`, with the reading it is due at.
    private var later: [(dueMs: Millis, queue: DispatchQueue, work: @Sendable () -> Void)] = []

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

    /// How many pieces of work given to `after` are not due yet.
    package var pending: Int { locked { later.count } }

    /// Moves the clock by `delta` ms (negative: back, as a system clock stepped by NTP does),
    /// wakes everything waiting on it and hands what `after` was given and is now due to its queue.
    package func move(by delta: Millis) {
        let (conditions, due) = locked {
            ms += delta
            let due = later.filter { $0.dueMs <= ms }
            later.removeAll { $0.dueMs <= ms }
            return (waiting.values.map(\.condition), due)
        }
        for entry in due { entry.queue.async(execute: entry.work) }
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

    /// The reading in nanoseconds (0 before the Unix epoch).
    package func steadyNs() -> UInt64 {
        let (ns, overflow) = UInt64(max(0, nowMs())).multipliedReportingOverflow(by: 1_000_000)
        return overflow ? UInt64.max : ns
    }

    /// Run at once when `delay` is not positive; otherwise when the clock is moved to now plus it
    /// (to the millisecond, as `hasReached`).
    package func after(_ delay: TimeInterval, on queue: DispatchQueue, execute work: @escaping @Sendable () -> Void) {
        let due: Bool = locked {
            let dueMs = ms + Millis((delay * 1000).rounded())
            guard dueMs > ms else { return true }
            later.append((dueMs, queue, work))
            return false
        }
        if due { queue.async(execute: work) }
    }

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

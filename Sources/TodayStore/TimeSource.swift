import Foundation
import TodayHost

/// Real time for the work that runs in the background: the wall-clock scheduler and the `wall`
/// sessions' clocks (C1), idle expiry and retention, a background loop's retry backoff. The
/// server runs on `SystemTime`; a test passes a `ManualTime`, which moves only when the test
/// moves it and wakes every loop waiting on it, so the test moves time instead of racing it
/// (as a session's virtual clock does for the rules).
public protocol TimeSource: Sendable {
    /// Now, as a Unix time in milliseconds.
    func nowMs() -> Millis

    /// Waits on `condition`, which the caller holds (as `NSCondition.wait(until:)`), until this
    /// source reads `deadline` or the condition is signalled; `false` when the deadline came.
    func wait(_ condition: NSCondition, until deadline: Date) -> Bool
}

extension TimeSource {
    /// Now, as a date.
    public var now: Date { Date(timeIntervalSince1970: Double(nowMs()) / 1000) }
}

/// This machine's clock.
public struct SystemTime: TimeSource {
    public init() {}

    public func nowMs() -> Millis { Millis((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    public func wait(_ condition: NSCondition, until deadline: Date) -> Bool {
        condition.wait(until: deadline)
    }
}

/// A Unix time read from `read` (a test's pinned or shifted clock), waited on as this machine's
/// time passes: `deadline` is as far from its reading as the wait is long.
struct ReadTime: TimeSource {
    let read: @Sendable () -> Millis

    func nowMs() -> Millis { read() }

    func wait(_ condition: NSCondition, until deadline: Date) -> Bool {
        let left = deadline.timeIntervalSince(now)
        return condition.wait(until: Date(timeIntervalSinceNow: max(0, left)))
    }
}

/// Time that moves only when the test moves it (`move(by:)`), for tests of what runs in the
/// background: whatever waits on it (a background loop's next wake) wakes at each move and
/// finds out whether its time came, so a test moves the clock past a due time and waits for
/// the effect, with no real time in between to race.
public final class ManualTime: TimeSource, @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var ms: Millis
    private var waiting: [ObjectIdentifier: (condition: NSCondition, count: Int)] = [:]

    /// `startMs`: the first reading (by default this machine's clock now; any value will do,
    /// since nothing waits on real time).
    public init(startMs: Millis = SystemTime().nowMs()) {
        ms = startMs
    }

    public func nowMs() -> Millis { locked { ms } }

    /// How many waits on this clock are in progress (a test knows a wait began by it).
    public var waits: Int { locked { waiting.values.reduce(0) { $0 + $1.count } } }

    /// Moves the clock by `delta` ms (negative: back, as a system clock stepped by NTP does) and
    /// wakes everything waiting on it.
    public func move(by delta: Millis) {
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

    public func wait(_ condition: NSCondition, until deadline: Date) -> Bool {
        let key = ObjectIdentifier(condition)
        let due = locked {
            let due = Double(ms) / 1000 >= deadline.timeIntervalSince1970
            if !due { waiting[key] = (condition, (waiting[key]?.count ?? 0) + 1) }
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
            return Double(ms) / 1000 < deadline.timeIntervalSince1970
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}

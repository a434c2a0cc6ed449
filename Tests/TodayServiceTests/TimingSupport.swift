import Foundation
import TodayHost
import TodayStore

/// A Unix clock (ms) that moves only when the test moves it, for the `wall` tests where the
/// real clock adds nothing but a race with the machine's load. Inject it with
/// `TestServer(clock:)`.
///
/// It starts a day ahead of the real clock. The server's background loops (wall-clock timers,
/// idle expiry) sleep until the real time that a due time read on this clock names: ahead of the
/// real clock they sleep until poked (a write, a restart) or for their minute, so only the
/// test's moves and the server's pokes make anything fire. Behind the real clock they would
/// wake at once, find nothing due by this clock, and spin.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var nowMs: Millis

    init() {
        nowMs = SessionStore.systemUnixNow() + 86_400_000
    }

    /// Moves the clock by `ms` (negative: back, as a system clock stepped by NTP does).
    func move(by ms: Millis) {
        lock.lock()
        nowMs += ms
        lock.unlock()
    }

    /// What `SessionStore(unixNow:)` reads.
    var read: @Sendable () -> Millis {
        { [self] in
            lock.lock()
            defer { lock.unlock() }
            return nowMs
        }
    }
}

/// How late this process's threads wake from a timed wait while a test runs: a thread that
/// waits on a condition 5 ms at a time, as the wall-clock scheduler waits for a due time, and
/// keeps its worst oversleep. Alone on an idle machine that is a millisecond or so; beside the
/// whole suite or under a sanitizer it is what the machine (not the scheduler under test) adds
/// to any wake-up at that moment.
final class WakeUpDelayProbe: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopped = false
    private var finished = false
    private var worstMs = 0.0

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "wake-up-delay-probe"
        thread.start()
    }

    private func run() {
        condition.lock()
        while !stopped {
            let target = Date(timeIntervalSinceNow: 0.005)
            _ = condition.wait(until: target)
            worstMs = max(worstMs, Date().timeIntervalSince(target) * 1000)
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the probe and returns the worst oversleep it saw, in ms.
    func stop() -> Double {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        return worstMs
    }
}

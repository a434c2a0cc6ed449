import Foundation
import TodayHost
import TodayStore

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

import Foundation

/// A thread that sleeps until the time `nextWake` names (or until poked), runs `work`, and
/// repeats until stopped. The wall-clock scheduler and the WAL checkpointer are two of these.
package final class BackgroundLoop: @unchecked Sendable {
    private let name: String
    private let nextWake: @Sendable () -> Date?
    private let work: @Sendable () throws -> Void
    private let report: @Sendable (String) -> Void
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopped = false
    private var poked = false
    private var finished = false
    private var started = false
    private var retryAsked = false
    /// The backoff as it starts (and restarts after a success).
    private let freshBackoff: RetryBackoff
    /// What "now" and "until" mean to the loop (`SystemTime`; a test's `ManualTime`).
    private let time: any TimeSource

    /// `nextWake` returning `nil` sleeps until a poke. Work that throws is retried with a
    /// growing wait (`RetryBackoff`, from `firstRetry` seconds), pokes notwithstanding, and
    /// `report` hears of it. `time`: the clock `nextWake` and the backoff are read on.
    package init(name: String, nextWake: @escaping @Sendable () -> Date?,
                report: @escaping @Sendable (String) -> Void = { _ in },
                firstRetry: TimeInterval = 0.1,
                time: any TimeSource = SystemTime(),
                work: @escaping @Sendable () throws -> Void) {
        freshBackoff = RetryBackoff(first: firstRetry)
        self.time = time
        self.name = name
        self.nextWake = nextWake
        self.report = report
        self.work = work
    }

    package func start() {
        condition.lock()
        started = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Wakes the loop now: what `nextWake` says may have changed.
    package func poke() {
        wake { poked = true }
    }

    /// What made the work fail is gone (storage takes writes again, `StorageHealth`): try now
    /// rather than at the end of the backoff (up to 30 s: a wall timer that fell due while the
    /// database was down would fire that late).
    package func retryNow() {
        wake {
            retryAsked = true
            poked = true
        }
    }

    /// Makes `change` under the lock and wakes the thread to look at it.
    private func wake(_ change: () -> Void) {
        condition.lock()
        change()
        condition.signal()
        condition.unlock()
    }

    /// Stops the loop and waits for its thread to finish.
    package func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while started, !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        var backoff = freshBackoff
        while true {
            let planned = nextWake()
            condition.lock()
            while !stopped {
                if retryAsked {
                    retryAsked = false
                    backoff.retryNow()
                }
                if let until = backoff.until, !time.hasReached(until) {
                    _ = time.wait(condition, until: until)
                    continue
                }
                if poked { break }
                guard let planned else {
                    condition.wait()
                    continue
                }
                if time.hasReached(planned) || !time.wait(condition, until: planned) { break }
            }
            poked = false
            if stopped {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            do {
                try work()
                if let line = backoff.succeeded() { report("\(name): \(line)") }
            } catch {
                if let line = backoff.failed(error, at: time.now) { report("\(name): \(line)") }
                // Try again once the backoff is over, even a loop that only wakes when poked.
                condition.lock()
                poked = true
                condition.unlock()
            }
        }
    }
}

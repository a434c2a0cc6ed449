import Foundation
import TodayStore

/// One thread for every `wall` session (C1): it sleeps until the earliest pending timer of any
/// of them is due, then lets the store fire what fell due. Writes to a `wall` session poke it,
/// since they may have armed an earlier timer.
public final class WallClockScheduler: @unchecked Sendable {
    private let store: SessionStore
    private let log: RequestLog
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopped = false
    private var poked = false
    private var finished = false

    public init(store: SessionStore, log: RequestLog) {
        self.store = store
        self.log = log
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "todaysim-wall-clock"
        thread.start()
    }

    /// A `wall` session changed: look again for the earliest due timer.
    public func poke() {
        condition.lock()
        poked = true
        condition.signal()
        condition.unlock()
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            let due: Int64?
            do {
                due = try store.nextWallDueUnixMs()
            } catch {
                log.note("wall clock: \(error)")
                due = nil
            }
            condition.lock()
            if !stopped, !poked {
                if let due {
                    _ = condition.wait(until: Date(timeIntervalSince1970: Double(due) / 1000))
                } else {
                    condition.wait()
                }
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
                try store.fireDueWallTimers()
            } catch {
                log.note("wall clock: \(error)")
            }
        }
    }
}

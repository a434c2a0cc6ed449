import Foundation

/// One thread for every `wall` session (C1): it sleeps until the earliest pending timer of any
/// of them is due, then lets the store fire what fell due. Writes to a `wall` session poke it,
/// since they may have armed an earlier timer.
package final class WallClockScheduler: Sendable {
    private let loop: BackgroundLoop

    /// The longest the scheduler sleeps without looking at the database again. Other servers on
    /// the same database arm timers too, and one may die before any word of them reaches this
    /// one: its timers are then found by this look, at most this late. Short enough for a lost
    /// timer to be seconds late, not lost; one indexed query per interval costs nothing.
    package static let defaultRescanInterval: TimeInterval = 2

    /// `rescanInterval`: tests of the wake-ups make it long, so that a timer found only by the
    /// rescan shows as not fired rather than as seconds late.
    package init(store: SessionStore, log: @escaping @Sendable (String) -> Void, rescanInterval: TimeInterval = defaultRescanInterval) {
        loop = BackgroundLoop(
            name: "todaysim-wall-clock",
            nextWake: {
                let rescan = store.time.now.addingTimeInterval(rescanInterval)
                do {
                    return min(try store.nextWallDueDate() ?? rescan, rescan)
                } catch {
                    // The work that follows fails the same way and backs off.
                    return store.time.now
                }
            },
            report: log,
            time: store.time,
            work: { try store.fireDueWallTimers() })
    }

    package func start() { loop.start() }

    /// A `wall` session changed: look again for the earliest due timer.
    package func poke() { loop.poke() }

    /// Storage takes writes again: fire what fell due without waiting out the backoff.
    package func retryNow() { loop.retryNow() }

    package func stop() { loop.stop() }
}

import Foundation
import TodayStore

/// One thread for every `wall` session (C1): it sleeps until the earliest pending timer of any
/// of them is due, then lets the store fire what fell due. Writes to a `wall` session poke it,
/// since they may have armed an earlier timer.
public final class WallClockScheduler: Sendable {
    private let loop: BackgroundLoop

    public init(store: SessionStore, log: RequestLog) {
        loop = BackgroundLoop(
            name: "todaysim-wall-clock",
            nextWake: {
                do {
                    return try store.nextWallDueUnixMs().map { Date(timeIntervalSince1970: Double($0) / 1000) }
                } catch {
                    // The work that follows fails the same way and backs off.
                    return Date()
                }
            },
            report: { line in log.note(line) },
            work: { try store.fireDueWallTimers() })
    }

    public func start() { loop.start() }

    /// A `wall` session changed: look again for the earliest due timer.
    public func poke() { loop.poke() }

    /// Storage takes writes again: fire what fell due without waiting out the backoff.
    public func retryNow() { loop.retryNow() }

    public func stop() { loop.stop() }
}

import Foundation
import TodayHost

/// Closes sessions idle past their `ttlMs` and, with a retention, purges sessions closed for
/// longer than it — on one thread that sleeps until the next idle expiry (or a minute).
package final class SessionExpiry: @unchecked Sendable {
    private let loop: BackgroundLoop

    /// `retentionMs`: purge closed sessions after this long; `nil` keeps them.
    package init(store: SessionStore, retentionMs: Millis?, log: @escaping @Sendable (String) -> Void) {
        loop = BackgroundLoop(
            name: "todaysim-expiry",
            nextWake: {
                var wake = store.time.now.addingTimeInterval(60)
                if let idle = try? store.nextIdleExpiryUnixMs() {
                    wake = min(wake, Date(unixMs: idle))
                }
                if let retentionMs, let closedAt = try? store.earliestClosedAtUnixMs() {
                    wake = min(wake, Date(unixMs: closedAt + retentionMs))
                }
                return wake
            },
            report: log,
            time: store.time,
            work: {
                try store.closeIdleSessions()
                try store.forgetIdempotencyKeys(olderThan: 24 * 60 * 60 * 1000)
                if let retentionMs { try store.purgeClosed(olderThan: retentionMs) }
            })
    }

    package func start() { loop.start() }

    /// A session with a `ttlMs` was created or touched: look again for the next expiry.
    package func poke() { loop.poke() }

    /// Storage takes writes again: look now rather than at the end of the backoff.
    package func retryNow() { loop.retryNow() }

    package func stop() { loop.stop() }
}

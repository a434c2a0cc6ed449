import CPostgres
import Foundation

/// What a server knows of its way to PostgreSQL while it runs (issue 14, item 3). Once a
/// connection is lost the database is *known down*: from then on no request connects or waits
/// for a connection — each is answered `storage_unavailable` at once (a connection attempt to a
/// host that does not answer lasts the whole connect timeout) — while a thread of this one
/// connects again in the background, waiting longer after each failure (`RetryBackoff`, up to
/// `longestWait`). The first connection that works ends the outage, and `/readyz` with it.
final class PostgresOutage: @unchecked Sendable {
    /// A database restarted in seconds is noticed within about this long; a server down longer
    /// costs one connection attempt per server this often.
    static let longestWait: TimeInterval = 2

    private let health: StorageHealth
    /// Connects and verifies one connection, and puts it to use; throws when the database is
    /// still out of reach.
    private let reconnect: @Sendable () throws(StoreError) -> Void
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var cause: String?
    private var reconnecting = false
    private var closed = false

    /// What the backoff between two tries waits on: this machine's clock, or a test's.
    private let time: any TimeSource

    init(health: StorageHealth, time: any TimeSource = SystemTime(), reconnect: @escaping @Sendable () throws(StoreError) -> Void) {
        self.health = health
        self.time = time
        self.reconnect = reconnect
    }

    var isDown: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cause != nil
    }

    /// Throws at once while the database is known down.
    func check() throws(StoreError) {
        condition.lock()
        let cause = cause
        condition.unlock()
        if let cause { throw .storageUnavailable(cause) }
    }

    /// A connection was lost or could not be made: the database is down until the background
    /// reconnects (started here unless it runs).
    func lost(_ cause: String) {
        condition.lock()
        guard !closed else {
            condition.unlock()
            return
        }
        self.cause = self.cause ?? cause
        let start = !reconnecting
        reconnecting = true
        // Under the lock, so readiness and the outage change in one order.
        health.unreachable(cause)
        condition.unlock()
        guard start else { return }
        let thread = Thread { [self] in reconnectUntilUp() }
        thread.name = "todaysim-pg-reconnect"
        thread.start()
    }

    /// No more reconnecting; an attempt under way finishes on its own (within the connect timeout).
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    private func reconnectUntilUp() {
        var backoff = RetryBackoff(ceiling: Self.longestWait)
        while true {
            condition.lock()
            while !closed, let until = backoff.until, !time.hasReached(until) { _ = time.wait(condition, until: until) }
            if closed {
                reconnecting = false
                condition.unlock()
                return
            }
            condition.unlock()
            do throws(StoreError) {
                try reconnect()
            } catch {
                _ = backoff.failed(error, at: time.now)
                continue
            }
            condition.lock()
            cause = nil
            reconnecting = false
            health.committed()
            condition.unlock()
            return
        }
    }
}

extension PostgresConnection {
    /// Whether the server ended this idle connection (a restart, a shutdown, an administrator),
    /// read from what already arrived on its socket: no round trip, never blocks.
    var wasEndedWhileIdle: Bool {
        if isBroken { return true }
        return PQconsumeInput(handle) == 0 || isBroken
    }
}

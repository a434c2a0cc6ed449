import Foundation
import TodayHost

/// `wall` sessions (C1): their timers fire by the real clock, found due by the wall-clock
/// scheduler or caught up when the session is read.
extension SessionStore {
    /// Fires the timers of every `wall` session that fell due by now (C1), each session in its
    /// own transaction. Returns the ids of the sessions that changed.
    @discardableResult
    package func fireDueWallTimers() throws(StoreError) -> [String] {
        var fired: [String] = []
        for id in try storage.dueWallSessions(nowMs: dueByDatabaseClock ? nil : unixNow()) {
            do throws(StoreError) {
                _ = try catchUp(id, skippingLocked: true)
                fired.append(id)
            } catch {
                // Removed since it was found due, or being written by another server (which
                // catches it up; if not far enough, it is still due and found again next
                // time): nothing to fire here, the others still are.
                guard case .sessionNotFound = error else { throw error }
            }
        }
        return fired
    }

    /// When, on this machine's clock, the earliest pending timer among `wall` sessions is due:
    /// by the database's clock, the delay it reports from now (this machine's clock may be
    /// off); otherwise the due time read as a Unix time (a test's clock's too).
    package func nextWallDueDate() throws(StoreError) -> Date? {
        guard dueByDatabaseClock else { return try storage.nextWallDue().map { Date(unixMs: $0) } }
        return try storage.nextWallDelay().map { time.now.addingTimeInterval(Double($0) / 1000) }
    }

    /// A `wall` session brought to the real clock; what fired is committed. `skippingLocked`
    /// (the scheduler): a session another server is writing is `sessionNotFound`, not waited for.
    func catchUp(_ id: String, skippingLocked: Bool = false) throws(StoreError) -> StoredSession {
        let (stored, fired) = try writing { transaction throws(StoreError) in
            let current = try current(id, transaction, skippingLocked: skippingLocked)
            var stored = current
            guard stored.isWall else { return ((stored, [TimelineEntry]()), nil) }
            var given = LedgerRecords()
            guard let caught = try catchUp(&stored.session, toWallClock: stored.wallNowMs(unixNowMs: try wallUnixNow(transaction)),
                                           given: &given, ord: stored.ord, transaction),
                  !caught.entries.isEmpty
            else { return ((stored, []), nil) }
            try transaction.saveRecords(ord: stored.ord, caught.ledgerWrites)
            try save(stored, from: current, transaction)
            _ = try append(caught.entries, ord: stored.ord, transaction)
            return ((stored, caught.entries), stored)
        }
        count(fired)
        return stored
    }
}

import Foundation
import TodayHost

/// What tests reach into.
extension SessionStore {
    /// Tests: makes the next `count` commits fail as on a full disk (SQLite).
    func failNextCommit(count: Int = 1) {
        (storage as? SQLiteStorage)?.failNextCommit(count: count)
    }

    /// Tests: how many injected failures are still to come.
    var failingCommitsForTesting: Int { (storage as? SQLiteStorage)?.injectedFailuresLeft ?? 0 }

    /// Tests: the session as its row holds it, bypassing the cache.
    func reloadFromDisk(_ id: String) throws(StoreError) -> StoredSession {
        try storage.write(urgent: false, { transaction throws(StoreError) in
            guard let row = try transaction.session(id: id) else { throw StoreError.sessionNotFound(id) }
            return try StoredSession(row: row)
        }, committed: { _ in })
    }
}

import Foundation
import TodayHost

/// What tests reach into (through `@testable import`): writes waited for, failures injected,
/// rows read past the cache. Not the store's API: its one way in for inputs is
/// `apply(steps:to:ifVersion:idempotency:completion:)`.
extension SessionStore {
    /// One input, waited for.
    func apply(_ input: Input, to id: String, ifVersion expectedVersion: Int? = nil) throws(StoreError) -> Write {
        try applyWaiting([.input(input)], to: id, ifVersion: expectedVersion)[0]
    }

    /// A batch, waited for.
    func applyAll(_ steps: [Step], to id: String, ifVersion expectedVersion: Int? = nil) throws(StoreError) -> [Write] {
        try applyWaiting(steps, to: id, ifVersion: expectedVersion)
    }

    /// One input, answered on the writer thread.
    func apply(_ input: Input, to id: String, ifVersion expectedVersion: Int? = nil,
               completion: @escaping @Sendable (Result<Write, StoreError>) -> Void) {
        apply(steps: [.input(input)], to: id, ifVersion: expectedVersion) { result in
            completion(result.flatMap { submitted in
                guard case let .applied(writes, _) = submitted, let write = writes.first else {
                    return .failure(.corrupt("a write without an Idempotency-Key was answered as a replay"))
                }
                return .success(write)
            })
        }
    }

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

    /// Tests: the records of `requestIds` as the rows hold them, bypassing every cache.
    func recordsFromDisk(_ id: String, requestIds: [String]) throws(StoreError) -> [String: RequestRecord] {
        try storage.write(urgent: false, { transaction throws(StoreError) in
            guard let row = try transaction.session(id: id) else { throw StoreError.sessionNotFound(id) }
            return try Self.records(of: requestIds, ord: row.ord, transaction)
        }, committed: { _ in })
    }
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport
@testable import TodayStore

/// Two servers on one database creating the same session id at once (issue 15, item 1: the fleet
/// answers as one server does): one creates it, the other is told it exists — never a failed
/// statement (a `500`).
@Suite struct PostgresCreateRaceTests {
    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<Void, StoreError>] = []
        func add(_ result: Result<Void, StoreError>) { lock.lock(); results.append(result); lock.unlock() }
        var all: [Result<Void, StoreError>] { lock.lock(); defer { lock.unlock() }; return results }
    }

    @Test func twoServersCreatingOneIdAtOnceGiveOneSessionAndOneSessionExists() async throws {
        try await withDatabaseAsync { uri in
            // A statement deadline far beyond the test's own steps: the creates wait on the lock
            // as long as this test holds it, never racing the 5 s default.
            let first = try SessionStore.open(uri, statementDeadline: .seconds(600))
            let second = try SessionStore.open(uri, statementDeadline: .seconds(600))
            defer { first.close(); second.close() }
            // The inserts' order lock, held here: both creates have looked for the id (not
            // there) and wait for it; released, they insert one after the other.
            let holder = try PostgresConnection(uri: uri)
            _ = try holder.execute("BEGIN")
            _ = try holder.execute("SELECT pg_advisory_xact_lock(\(PostgresTransaction.sessionOrderLock))")
            let outcome = Outcome()
            for store in [first, second] {
                Thread {
                    outcome.add(Result { () throws(StoreError) in _ = try store.create(id: "s1", config: SessionConfig(uid: "u1")) })
                }.start()
            }
            let watcher = try PostgresConnection(uri: uri)
            let waiting = {
                (try? watcher.execute("""
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """).int64(0, 0)) == 2
            }
            #expect(await eventually(within: 120) { waiting() }, "both creates wait for the order lock")
            _ = try holder.execute("COMMIT")
            #expect(await eventually { outcome.all.count == 2 })
            let failures = outcome.all.compactMap { result -> StoreError? in
                if case let .failure(error) = result { return error }
                return nil
            }
            #expect(failures.count == 1, "one create stands")
            for error in failures {
                guard case .sessionExists("s1") = error else {
                    Issue.record("the other create fails with \(error), not sessionExists (answered 500, not 409)")
                    continue
                }
            }
        }
    }
}

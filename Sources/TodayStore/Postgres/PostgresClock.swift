import TodayHost

/// Whose clock says a `wall` timer is due when several servers share the database: the
/// database's. Each server's clock may be off by seconds; had each used its own, one running
/// ahead would fire timers early (C1), and one running behind would give the sessions it
/// creates a later origin. PostgreSQL's `clock_timestamp()` is one clock for all of them
/// (`now()` would be the transaction's start, before it waited for any lock).
extension PostgresTransaction {
    /// The database's time as Unix ms, whole milliseconds down as this machine's clock reads.
    static let databaseNow = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

    static let clockStatements: [(name: String, sql: String)] = [
        ("database_now", "SELECT \(databaseNow)"),
        // A scheduler skips what another server is writing: that writer catches the session up
        // (every write to a `wall` session does), and the scheduler looks again at once.
        ("lock_sessions_skip_locked", """
            SELECT id, ord, revision FROM sessions WHERE id = ANY($1::text[]) AND closed < 2 ORDER BY id FOR UPDATE SKIP LOCKED
            """),
        // The scalar subquery is evaluated once, so the index on the due time still serves.
        ("next_wall_delay", """
            SELECT wall_origin_ms + next_due_ms - (SELECT \(databaseNow)) FROM sessions
            WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL
            ORDER BY wall_origin_ms + next_due_ms LIMIT 1
            """),
    ]

    func lockSessionsSkippingLocked(ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        try Self.versions(try run("lock_sessions_skip_locked", [PostgresValue.textArray(ids.sorted())]))
    }

    func databaseNowMs() throws(StoreError) -> Millis {
        if let kept = time.ms { return kept }
        let result = try run("database_now")
        let now: Millis
        do { now = try result.int64(0, 0) } catch { throw StoreError(error) }
        time.ms = now
        return now
    }
}

/// The database time one transaction read (`PostgresTransaction.databaseNowMs`): a batch
/// catching up many `wall` sessions asks once, after taking all of its locks.
final class TransactionTime {
    var ms: Millis?
}

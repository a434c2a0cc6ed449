/// The PostgreSQL store `todaysim migrate` copies into: its schema made as a server makes it,
/// holding no session, and copied into by one `migrate` at a time. Writes go in transactions
/// of about `rowLimit` rows (or `byteBudget` bytes), so a large store never holds one long
/// transaction open on a database others share; every session copied stays hidden
/// (`closed = 2`, id `migrating/<closed>/<id>`, skipped by every read, timer and expiry of a
/// server) until `reveal` shows them all in one transaction.
final class MigrationTarget {
    /// Held (per connection) while copying: two `migrate`s into one database would remove each
    /// other's hidden rows.
    static let copyLock: Int64 = 0x5444_534D_0004
    /// The hidden id's prefix; the statements below spell it too (`substr(id, 11, 1)` is the
    /// `closed` digit after it, `substr(id, 13)` the id).
    static let hiddenPrefix = "migrating/"

    /// The URI with its password masked.
    let name: String
    private let connection: PostgresConnection
    private let rowLimit: Int
    private let byteBudget: Int
    // The transaction being filled.
    private var inTransaction = false
    private var rows = 0
    private var bytes = 0

    private static let statements: [(name: String, sql: String)] = [
        ("migrate_session", """
            INSERT INTO sessions (id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms,
                                  last_active_ms, closed_at_ms)
            VALUES ($1, $2, $3, 2, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ord
            """),
        ("migrate_requests", """
            INSERT INTO requests (session, request_id, record)
            SELECT $1, request_id, record FROM unnest($2::text[], $3::bytea[]) AS r(request_id, record)
            """),
        ("migrate_keys", """
            INSERT INTO idempotency (session, key, fingerprint, response, created_ms)
            SELECT $1, key, fingerprint, response, created_ms
            FROM unnest($2::text[], $3::bytea[], $4::bytea[], $5::bigint[]) AS k(key, fingerprint, response, created_ms)
            """),
        // The identity `ord`s are drawn in the order of the rows given: the source's order.
        ("migrate_violations", """
            INSERT INTO violations (session, seq, code)
            SELECT session, seq, code FROM unnest($1::bigint[], $2::int[], $3::text[]) WITH ORDINALITY AS v(session, seq, code, n)
            ORDER BY n
            """),
        ("visible_sessions", "SELECT count(*) FROM sessions WHERE closed < 2"),
        ("migrate_reveal", """
            UPDATE sessions s SET closed = substr(id, 11, 1)::smallint, id = substr(id, 13),
                revision = (SELECT coalesce(max(seq), 0) FROM timeline t WHERE t.session = s.ord)
            WHERE closed = 2 AND id LIKE 'migrating/%'
            """),
    ]

    /// Connects, makes or upgrades the schema (refused when a newer todaysim made it), and
    /// refuses a database that holds sessions or that another `migrate` is copying into.
    init(uri: String, rowLimit: Int, byteBudget: Int) throws(StoreError) {
        name = PostgresConnection.redacted(uri)
        self.rowLimit = rowLimit
        self.byteBudget = byteBudget
        // The schema exactly as a server's start makes it.
        try PostgresStorage(uri: uri, readConnections: 1).close()
        connection = try PostgresStorage.connect(uri, deadline: PostgresStorage.defaultStatementDeadline)
        // An operator's one-off copy: its last transaction shows every copied session at once
        // and may take long; Ctrl-C ends it, not a server's deadline for requests.
        connection.deadline = nil
        try PostgresTransaction.prepare(connection)
        try checked {
            for (name, sql) in Self.statements { try connection.prepare(name, sql) }
        }
        let locked = try checked {
            try connection.execute("SELECT pg_try_advisory_lock($1)::int", [.int64(Self.copyLock)]).int64(0, 0) == 1
        }
        guard locked else { throw .unusable(path: name, reason: "another todaysim migrate is copying into \(name)") }
        let visible = try checked { try connection.run("visible_sessions").int64(0, 0) }
        guard visible == 0 else {
            throw .unusable(path: name, reason: "\(name) already holds \(visible) session(s); migrate copies into an empty store only")
        }
    }

    /// Removes what an earlier `migrate` copied before it failed (hidden rows nobody reads).
    func removeLeftovers() throws(StoreError) {
        let hidden = "SELECT ord FROM sessions WHERE closed = 2 AND id LIKE 'migrating/%'"
        let sql = ["timeline", "requests", "violations", "idempotency"]
            .map { "DELETE FROM \($0) WHERE session IN (\(hidden));" }.joined(separator: "\n")
            + "\nDELETE FROM sessions WHERE closed = 2 AND id LIKE 'migrating/%';"
        try checked { try connection.transaction { try connection.execute(sql) } }
    }

    /// Inserts session `session` hidden; returns its `ord` here. A row without `last_active_ms`
    /// (made before idle expiry existed, so without a `ttl_ms` either) takes `nowMs`.
    func insert(_ session: MigrationSource.Session, nowMs: Int64) throws(StoreError) -> Int64 {
        let optional = { (value: Int64?) in value.map(PostgresValue.int64) ?? .null }
        let result = try chunked(rows: 1, bytes: session.state.count) {
            try connection.run("migrate_session", [
                .text("\(Self.hiddenPrefix)\(session.closed)/\(session.id)"), .text(session.uid), .text(session.label),
                .text(session.clock), .int64(session.wallOriginMs), optional(session.nextDueMs), .int64(session.version),
                .bytes(session.state), optional(session.ttlMs), .int64(session.lastActiveMs ?? nowMs), optional(session.closedAtMs),
            ])
        }
        return try checked { try result.int64(0, 0) }
    }

    /// Timeline entries, through the statement every server writes them with.
    func insert(_ entries: [EncodedEntry], of ord: Int64) throws(StoreError) {
        try chunked(rows: entries.count, bytes: entries.reduce(0) { $0 + $1.json.count }) {
            let transaction = PostgresTransaction(connection: connection)
            try transaction.insertEntries(ord: ord, entries)
            try transaction.flush()
        }
    }

    func insert(_ records: [MigrationSource.Record], of ord: Int64) throws(StoreError) {
        try chunked(rows: records.count, bytes: records.reduce(0) { $0 + $1.record.count }) {
            try connection.run("migrate_requests", [
                .int64(ord), PostgresValue.textArray(records.map(\.requestId)), PostgresValue.byteaArray(records.map(\.record)),
            ])
        }
    }

    func insert(_ keys: [MigrationSource.Key], of ord: Int64) throws(StoreError) {
        let bytes = keys.reduce(0) { $0 + $1.fingerprint.count + $1.response.count }
        try chunked(rows: keys.count, bytes: bytes) {
            try connection.run("migrate_keys", [
                .int64(ord), PostgresValue.textArray(keys.map(\.key)), PostgresValue.byteaArray(keys.map(\.fingerprint)),
                PostgresValue.byteaArray(keys.map(\.response)), PostgresValue.int64Array(keys.map(\.createdMs)),
            ])
        }
    }

    /// Violations of sessions already inserted (`session`: the `ord` here), in the order given.
    func insert(violations: [(session: Int64, seq: Int, code: String)]) throws(StoreError) {
        try chunked(rows: violations.count, bytes: 0) {
            // Under the servers' lock for violation `ord`s, which makes them grow in commit order.
            _ = try connection.run("order_lock", [.int64(PostgresTransaction.violationOrderLock)])
            return try connection.run("migrate_violations", [
                PostgresValue.int64Array(violations.map(\.session)), PostgresValue.int64Array(violations.map { Int64($0.seq) }),
                PostgresValue.textArray(violations.map(\.code)),
            ])
        }
    }

    /// Commits what is pending, then shows every hidden session in one transaction — after
    /// checking again, under the lock servers take to insert a session, that none appeared
    /// meanwhile. `expected`: how many were copied.
    func reveal(expected: Int) throws(StoreError) {
        try commit()
        try checked {
            try connection.transaction {
                _ = try connection.run("order_lock", [.int64(PostgresTransaction.sessionOrderLock)])
                let visible = try connection.run("visible_sessions").int64(0, 0)
                guard visible == 0 else {
                    throw PostgresError(sqlState: nil, message: "\(visible) session(s) were created in \(name) while copying; nothing was shown")
                }
                let shown = try connection.run("migrate_reveal").affectedRows
                guard shown == expected else {
                    throw PostgresError(sqlState: nil, message: "\(shown) hidden session(s) found to show, \(expected) copied; nothing was shown")
                }
            }
        }
    }

    /// Ends a failed copy: its open transaction rolled back, the hidden rows removed (when the
    /// database can still be reached; else the next `migrate` removes them).
    func abandon() {
        if inTransaction, !connection.isBroken { _ = try? connection.execute("ROLLBACK") }
        inTransaction = false
        try? removeLeftovers()
    }

    /// Runs `body` in the transaction being filled, committed once it holds `rowLimit` rows or
    /// `byteBudget` bytes.
    @discardableResult
    private func chunked<T>(rows count: Int, bytes size: Int, _ body: () throws -> T) throws(StoreError) -> T {
        if !inTransaction {
            try checked { try connection.execute("BEGIN") }
            inTransaction = true
        }
        let result = try checked(body)
        rows += count
        bytes += size
        if rows >= rowLimit || bytes >= byteBudget { try commit() }
        return result
    }

    private func commit() throws(StoreError) {
        guard inTransaction else { return }
        let status = try checked { try connection.execute("COMMIT").commandStatus }
        inTransaction = false
        rows = 0
        bytes = 0
        guard status == "COMMIT" else { throw .storageUnavailable("a copy transaction was rolled back") }
    }

    /// `body`'s result, a failure as the store's error.
    @discardableResult
    private func checked<T>(_ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresError {
            throw StoreError(error)
        } catch {
            throw .storageUnavailable("\(error)")
        }
    }
}

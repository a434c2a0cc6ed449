import TodayHost

/// The statements of one PostgreSQL write transaction (`PostgresStorage.write`), and every
/// statement a connection prepares. Rows another server may write are locked (`FOR UPDATE`)
/// before they are read for a write, and a session row is written only at the version read
/// under that lock.
struct PostgresTransaction: StorageTransaction {
    let connection: PostgresConnection
    /// Rows to write at the end of the transaction, a statement per table (`flush`).
    let writes: PostgresWrites
    /// The database's time, once read (`databaseNowMs`).
    let time = TransactionTime()

    /// `sender`: the token of the server whose transaction it is, in what it announces
    /// (`PostgresChannels`; the migrate tool announces nothing).
    init(connection: PostgresConnection, sender: String = "") {
        self.connection = connection
        writes = PostgresWrites(sender: sender)
    }

    /// Writes what the transaction kept back; `PostgresStorage.write` calls it before COMMIT.
    func flush() throws(StoreError) {
        try writes.flush { name, parameters throws(StoreError) in try run(name, parameters) }
    }

    /// Locks taken so that cursors (`ord` of sessions and violations) grow in commit order:
    /// with several writers a sequence value is drawn at insert time but becomes visible at
    /// commit, so a reader paging by `ord` could pass a lower value that commits later and
    /// skip it. Inserting sessions (and violations) under one transaction-scoped advisory lock
    /// serializes those inserts until commit; their commits, and so their `ord`s, are ordered.
    static let sessionOrderLock: Int64 = 0x5444_534D_0002
    static let violationOrderLock: Int64 = 0x5444_534D_0003

    static let statements: [(name: String, sql: String)] = [
        ("select_session", "SELECT ord, wall_origin_ms, state FROM sessions WHERE id = $1 AND closed < 2"),
        ("lock_sessions", "SELECT id, ord, revision FROM sessions WHERE id = ANY($1::text[]) AND closed < 2 ORDER BY id FOR UPDATE"),
        ("session_versions", "SELECT id, ord, revision FROM sessions WHERE id = ANY($1::text[]) AND closed < 2"),
        ("insert_session", """
            INSERT INTO sessions (id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms, last_active_ms,
                                  revision)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ord
            """),
        ("update_uid", "UPDATE sessions SET uid = $1 WHERE ord = $2"),
        ("update_sessions", """
            UPDATE sessions s SET closed = u.closed, next_due_ms = u.next_due_ms, version = u.version, state = u.state,
                last_active_ms = u.now_ms, revision = u.revision,
                closed_at_ms = CASE WHEN u.closed = 1 THEN coalesce(s.closed_at_ms, u.now_ms) ELSE NULL END
            FROM unnest($1::bigint[], $2::smallint[], $3::bigint[], $4::bigint[], $5::bytea[], $6::bigint[], $7::bigint[],
                        $8::bigint[])
                AS u(ord, closed, next_due_ms, version, state, now_ms, expected, revision)
            WHERE s.ord = u.ord AND s.closed < 2 AND (u.expected IS NULL OR s.revision = u.expected)
            """),
        ("insert_timeline", """
            INSERT INTO timeline (session, seq, kind, entry)
            SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bytea[])
            """),
        // In the order given (WITH ORDINALITY): violation ords follow the entries' order.
        ("insert_violations", """
            INSERT INTO violations (session, seq, code)
            SELECT session, seq, code FROM unnest($1::bigint[], $2::int[], $3::text[]) WITH ORDINALITY AS v(session, seq, code, n)
            ORDER BY n
            """),
        ("upsert_records", """
            INSERT INTO requests (session, request_id, record)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
            ON CONFLICT (session, request_id) DO UPDATE SET record = excluded.record
            """),
        ("notify", "SELECT pg_notify(channel, payload) FROM unnest($1::text[], $2::text[]) AS n(channel, payload)"),
        ("select_record", "SELECT record FROM requests WHERE session = $1 AND request_id = $2"),
        ("select_idempotency", "SELECT fingerprint, response FROM idempotency WHERE session = $1 AND key = $2"),
        ("insert_idempotency", "INSERT INTO idempotency (session, key, fingerprint, response, created_ms) VALUES ($1, $2, $3, $4, $5)"),
        ("reclaim_idempotency", "DELETE FROM idempotency WHERE session = $1"),
        ("purge_idempotency", "DELETE FROM idempotency WHERE created_ms <= $1"),
        ("sessions_to_purge", "SELECT ord, id FROM sessions WHERE closed < 2 AND ($1::text IS NULL OR label = $1) ORDER BY id FOR UPDATE"),
        ("closed_sessions", "SELECT ord, id FROM sessions WHERE closed_at_ms IS NOT NULL AND closed_at_ms <= $1 AND closed < 2 ORDER BY id FOR UPDATE"),
        ("hide_session", """
            UPDATE sessions SET closed = 2, id = 'removing/' || ord, uid = '', label = NULL, next_due_ms = NULL,
                ttl_ms = NULL, closed_at_ms = NULL WHERE ord = $1
            """),
        ("reclaim_timeline", "DELETE FROM timeline WHERE session = $1 AND seq <= (SELECT min(seq) FROM timeline WHERE session = $1) + $2"),
        ("reclaim_violations", "DELETE FROM violations WHERE session = $1 AND seq <= (SELECT min(seq) FROM violations WHERE session = $1) + $2"),
        ("reclaim_requests", """
            DELETE FROM requests WHERE session = $1
                AND request_id IN (SELECT request_id FROM requests WHERE session = $1 LIMIT $2)
            """),
        ("delete_session", "DELETE FROM sessions WHERE ord = $1"),
        ("session_status", "SELECT closed FROM sessions WHERE ord = $1"),
        ("copy_requests", "INSERT INTO requests (session, request_id, record) SELECT $1, request_id, record FROM requests WHERE session = $2"),
        ("copy_timeline", """
            INSERT INTO timeline (session, seq, kind, entry)
                SELECT $1, seq, kind, entry FROM timeline WHERE session = $2 AND seq > $3 AND seq <= $4
            """),
        ("copy_violations", """
            INSERT INTO violations (session, seq, code)
                SELECT $1, seq, code FROM violations WHERE session = $2 AND seq > $3 AND seq <= $4 ORDER BY seq
            """),
        ("reveal_session", """
            UPDATE sessions SET id = $1, uid = $2, label = $3, closed = $4::smallint, next_due_ms = $5, version = $8, state = $9,
                closed_at_ms = CASE WHEN $4::smallint = 1 THEN $7::bigint ELSE NULL END WHERE ord = $6
            """),
        ("order_lock", "SELECT pg_advisory_xact_lock($1)"),
        // Reads.
        ("session_counts", "SELECT closed, count(*) FROM sessions WHERE closed < 2 GROUP BY closed"),
        ("list_sessions", """
            SELECT ord, wall_origin_ms, state FROM sessions
            WHERE ord > $1 AND closed < 2 AND ($2::text IS NULL OR uid = $2) AND ($3::text IS NULL OR label = $3)
                AND ($4::smallint IS NULL OR closed = $4)
            ORDER BY ord LIMIT $5
            """),
        ("timeline_page", """
            SELECT seq, entry FROM timeline WHERE session = $1 AND seq > $2 AND ($3::text IS NULL OR kind = $3)
            ORDER BY seq LIMIT $4
            """),
        // A page and whether its session is still stored under `ord`, in one statement (one
        // snapshot, one round trip): always one row at least, `(stored 0|1, NULL, NULL)` when there
        // is no entry to send.
        ("stored_timeline_page", """
            SELECT s.stored::int, t.seq, t.entry
            FROM (SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $5 AND ord = $1 AND closed < 2) AS stored) s
            LEFT JOIN LATERAL (
                SELECT seq, entry FROM timeline WHERE session = $1 AND seq > $2 AND ($3::text IS NULL OR kind = $3)
                ORDER BY seq LIMIT $4
            ) t ON s.stored
            ORDER BY t.seq
            """),
        ("session_ord", "SELECT ord FROM sessions WHERE id = $1 AND closed < 2"),
        ("session_records", "SELECT record FROM requests WHERE session = $1"),
        ("violations_page", """
            SELECT v.ord, s.id, t.entry FROM violations v
            JOIN sessions s ON s.ord = v.session
            JOIN timeline t ON t.session = v.session AND t.seq = v.seq
            WHERE v.ord > $1 AND s.closed < 2 AND ($2::text IS NULL OR s.uid = $2) AND ($3::text IS NULL OR s.label = $3)
                AND ($4::text IS NULL OR v.code = $4)
            ORDER BY v.ord LIMIT $5
            """),
        ("idle_sessions", "SELECT id FROM sessions WHERE closed = 0 AND ttl_ms IS NOT NULL AND last_active_ms + ttl_ms <= $1 LIMIT 500"),
        ("next_idle_expiry", "SELECT min(last_active_ms + ttl_ms) FROM sessions WHERE closed = 0 AND ttl_ms IS NOT NULL"),
        ("earliest_closed_at", "SELECT min(closed_at_ms) FROM sessions WHERE closed_at_ms IS NOT NULL AND closed < 2"),
        ("due_wall_sessions", """
            SELECT id FROM sessions WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL
                AND wall_origin_ms + next_due_ms <= (SELECT coalesce($1::bigint, \(databaseNow)))
            ORDER BY wall_origin_ms + next_due_ms
            """),
        ("next_wall_due", """
            SELECT wall_origin_ms + next_due_ms FROM sessions WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL
            ORDER BY wall_origin_ms + next_due_ms LIMIT 1
            """),
        ("hidden_rows", "SELECT count(*) FROM sessions WHERE closed = 2"),
        ("next_removing", "SELECT ord FROM sessions WHERE closed = 2 AND id LIKE 'removing/%' ORDER BY ord LIMIT 1"),
    ]

    /// Prepares every statement on a new connection.
    static func prepare(_ connection: PostgresConnection) throws(StoreError) {
        do {
            for (name, sql) in statements + clockStatements { try connection.prepare(name, sql) }
        } catch {
            throw StoreError(error)
        }
    }

    func run(_ name: String, _ parameters: [PostgresValue] = []) throws(StoreError) -> PostgresResult {
        do {
            return try connection.run(name, parameters)
        } catch {
            throw StoreError(error)
        }
    }

    /// `run` for a statement that gives a row the session id `id`. Another server may have
    /// stored that id since this transaction found it free (each waited for the other's commit):
    /// that is the id existing, as on one server, not a failed statement (a `500`).
    private func claiming(_ id: String, _ name: String, _ parameters: [PostgresValue]) throws(StoreError) -> PostgresResult {
        do {
            return try connection.run(name, parameters)
        } catch {
            if error.isUniqueViolation { throw .sessionExists(id) }
            throw StoreError(error)
        }
    }

    private func rows<T>(_ result: PostgresResult, _ read: (Int) throws(PostgresError) -> T) throws(StoreError) -> [T] {
        do {
            return try (0..<result.rowCount).map { row throws(PostgresError) in try read(row) }
        } catch {
            throw .postgres(error)
        }
    }

    static func sessionRows(_ result: PostgresResult) throws(PostgresError) -> [SessionRow] {
        try (0..<result.rowCount).map { row throws(PostgresError) in
            SessionRow(ord: try result.int64(row, 0), wallOriginMs: try result.int64(row, 1), state: try result.bytes(row, 2))
        }
    }

    private static func nextDue(_ session: HostSession) -> PostgresValue {
        session.nextDueMs.map { .int64($0) } ?? .null
    }

    func session(id: String) throws(StoreError) -> SessionRow? {
        let result = try run("select_session", [.text(id)])
        do { return try Self.sessionRows(result).first } catch { throw .postgres(error) }
    }

    func lockSessions(ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        try Self.versions(try run("lock_sessions", [PostgresValue.textArray(ids.sorted())]))
    }

    /// `(id, ord, version)` rows by id.
    static func versions(_ result: PostgresResult) throws(StoreError) -> [String: StoredVersion] {
        var versions: [String: StoredVersion] = [:]
        do {
            for row in 0..<result.rowCount {
                versions[try result.text(row, 0)] = StoredVersion(ord: try result.int64(row, 1), revision: Int(try result.int64(row, 2)))
            }
        } catch {
            throw .postgres(error)
        }
        return versions
    }

    func insertSession(_ row: NewSessionRow) throws(StoreError) -> Int64 {
        _ = try run("order_lock", [.int64(Self.sessionOrderLock)])
        let session = row.session
        let result = try claiming(row.id, "insert_session", [
            .text(row.id), .text(row.hidden ? "" : session.uid), row.hidden ? .null : .text(session.config.label),
            .int(row.hidden ? 2 : 0), .text(session.config.clock.rawValue), .int64(row.wallOriginMs),
            row.hidden ? .null : Self.nextDue(session), .int(session.version), .bytes(session.stateBytes),
            row.ttlMs.map { .int64($0) } ?? .null, .int64(row.nowMs), .int(session.lastSeq),
        ])
        return try rows(result) { row throws(PostgresError) in try result.int64(row, 0) }.first ?? 0
    }

    /// Kept until the flush: the row was locked when the transaction read it, so it is still
    /// there and at `expectedRevision` (the flush checks both).
    func updateSession(ord: Int64, _ session: HostSession, expectedRevision: Int?, nowMs: Millis) throws(StoreError) -> Bool {
        writes.update(ord: ord, session, expectedRevision: expectedRevision, nowMs: nowMs)
        return true
    }

    func updateUid(ord: Int64, uid: String) throws(StoreError) {
        writes.updateUid(ord: ord, uid: uid)
    }

    func insertEntries(ord: Int64, _ entries: [EncodedEntry]) throws(StoreError) {
        writes.insert(ord: ord, entries)
    }

    func record(ord: Int64, requestId: String) throws(StoreError) -> [UInt8]? {
        if let kept = writes.record(ord: ord, requestId: requestId) { return kept }
        let result = try run("select_record", [.int64(ord), .text(requestId)])
        return try rows(result) { row throws(PostgresError) in try result.bytes(row, 0) }.first
    }

    func saveRecords(ord: Int64, _ records: [RequestRecord]) throws(StoreError) {
        writes.save(ord: ord, records)
    }

    func idempotency(ord: Int64, key: String) throws(StoreError) -> (fingerprint: [UInt8], answer: [UInt8])? {
        if let kept = writes.idempotency(ord: ord, key: key) { return kept }
        let result = try run("select_idempotency", [.int64(ord), .text(key)])
        return try rows(result) { row throws(PostgresError) in (fingerprint: try result.bytes(row, 0), answer: try result.bytes(row, 1)) }.first
    }

    func insertIdempotency(ord: Int64, key: String, fingerprint: [UInt8], answer: [UInt8], createdMs: Millis) throws(StoreError) {
        writes.remember(ord: ord, key: key, fingerprint: fingerprint, answer: answer, createdMs: createdMs)
    }

    func forgetIdempotency(createdBefore: Millis) throws(StoreError) {
        _ = try run("purge_idempotency", [.int64(createdBefore)])
    }

    func announce(changed ids: [String], wallTimers: [String]) throws(StoreError) {
        writes.announce(changed: ids, wallTimers: wallTimers)
    }

    // A batch of steps writes nothing before the flush: its savepoint is a copy of what is kept.
    func savepoint() throws(StoreError) { writes.savepoint() }
    func releaseSavepoint() throws(StoreError) { writes.releaseSavepoint() }
    func rollbackToSavepoint() throws(StoreError) { writes.rollbackToSavepoint() }

    // MARK: Removal and forks

    private func ordsAndIds(_ result: PostgresResult) throws(StoreError) -> [(ord: Int64, id: String)] {
        try rows(result) { row throws(PostgresError) in (ord: try result.int64(row, 0), id: try result.text(row, 1)) }
    }

    func sessionsToPurge(label: String?) throws(StoreError) -> [(ord: Int64, id: String)] {
        try ordsAndIds(try run("sessions_to_purge", [.text(label)]))
    }

    func closedSessions(closedBeforeMs: Millis) throws(StoreError) -> [(ord: Int64, id: String)] {
        try ordsAndIds(try run("closed_sessions", [.int64(closedBeforeMs)]))
    }

    func hide(ord: Int64) throws(StoreError) {
        _ = try run("hide_session", [.int64(ord)])
    }

    func reclaim(ord: Int64, rows count: Int) throws(StoreError) -> Int {
        var removed = 0
        for name in ["reclaim_timeline", "reclaim_violations", "reclaim_requests"] {
            removed += try run(name, [.int64(ord), .int(count)]).affectedRows
        }
        if removed == 0 {
            _ = try run("reclaim_idempotency", [.int64(ord)])
            _ = try run("delete_session", [.int64(ord)])
        }
        return removed
    }

    func status(ord: Int64) throws(StoreError) -> Int? {
        let result = try run("session_status", [.int64(ord)])
        return try rows(result) { row throws(PostgresError) in Int(try result.int64(row, 0)) }.first
    }

    func copyRecords(to copy: Int64, from source: Int64) throws(StoreError) {
        _ = try run("copy_requests", [.int64(copy), .int64(source)])
    }

    func copyEntries(to copy: Int64, from source: Int64, after: Int, upTo: Int) throws(StoreError) {
        let range: [PostgresValue] = [.int64(copy), .int64(source), .int(after), .int(upTo)]
        _ = try run("copy_timeline", range)
        _ = try run("order_lock", [.int64(Self.violationOrderLock)])
        _ = try run("copy_violations", range)
    }

    func reveal(ord: Int64, id: String, _ session: HostSession, nowMs: Millis) throws(StoreError) {
        _ = try claiming(id, "reveal_session", [
            .text(id), .text(session.uid), .text(session.config.label), .int(session.isClosed ? 1 : 0),
            Self.nextDue(session), .int64(ord), .int64(nowMs), .int(session.version), .bytes(session.stateBytes),
        ])
    }
}

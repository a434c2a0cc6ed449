import TodayHost

/// The statements of one PostgreSQL write transaction (`PostgresStorage.write`); the SQL of
/// every statement a connection prepares is in `PostgresStatements.swift`. Rows another server
/// may write are locked (`FOR UPDATE`) before they are read for a write, and a session row is
/// written only at the version read under that lock.
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

    func records(ord: Int64, requestIds: [String]) throws(StoreError) -> [String: [UInt8]] {
        // What this transaction wrote and has not flushed yet stands over what is stored.
        var found: [String: [UInt8]] = [:]
        let unwritten = requestIds.filter { id in
            guard let kept = writes.record(ord: ord, requestId: id) else { return true }
            found[id] = kept
            return false
        }
        guard !unwritten.isEmpty else { return found }
        let result = try run("select_records", [.int64(ord), PostgresValue.textArray(unwritten)])
        let stored = try rows(result) { row throws(PostgresError) in (try result.text(row, 0), try result.bytes(row, 1)) }
        for (id, record) in stored { found[id] = record }
        return found
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

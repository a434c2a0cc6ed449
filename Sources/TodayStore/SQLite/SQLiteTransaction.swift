import TodayHost

/// The statements of one SQLite write transaction (`SQLiteStorage.write`). The write lock is
/// held throughout, so no other writer can move a row between a read and a write here.
struct SQLiteTransaction: StorageTransaction {
    let database: Database
    let statements: StoreStatements

    private func run(_ statement: Statement, _ values: [SQLiteValue] = []) throws(StoreError) {
        do { try statement.run(values) } catch { throw .database(error) }
    }

    private func rows<T>(_ statement: Statement, _ values: [SQLiteValue], _ read: (Statement) -> T) throws(StoreError) -> [T] {
        do { return try statement.rows(values, read) } catch { throw .database(error) }
    }

    private static func nextDue(_ session: HostSession) -> SQLiteValue {
        session.nextDueMs.map { .integer($0) } ?? .null
    }

    func session(id: String) throws(StoreError) -> SessionRow? {
        do { return try statements.sessionRow(id: id) } catch { throw .database(error) }
    }

    /// The write lock already keeps every other writer out: this only reads the versions.
    func lockSessions(ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        do { return try SQLiteStorage.versions(of: ids, statements) } catch { throw .database(error) }
    }

    func lockSessionsSkippingLocked(ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        try lockSessions(ids: ids)
    }

    func databaseNowMs() -> Millis { SessionStore.systemUnixNow() }

    func insertSession(_ row: NewSessionRow) throws(StoreError) -> Int64 {
        let session = row.session
        try run(statements.insertSession, [
            .text(row.id), .text(row.hidden ? "" : session.uid), row.hidden ? .null : .text(session.config.label),
            .integer(row.hidden ? 2 : 0), .text(session.config.clock.rawValue), .integer(row.wallOriginMs),
            row.hidden ? .null : Self.nextDue(session), .integer(session.version), .blob(session.stateBytes),
            row.ttlMs.map { .integer($0) } ?? .null, .integer(row.nowMs),
        ])
        return try rows(statements.lastInsertOrd, []) { $0.int64(0) }.first ?? 0
    }

    func updateSession(ord: Int64, _ session: HostSession, expectedRevision: Int?, nowMs: Millis) throws(StoreError) -> Bool {
        // One writer holds the file: the stored revision is the cached one, so `expectedRevision`
        // needs no check here.
        try run(statements.updateSession, [
            .integer(session.isClosed ? 1 : 0), Self.nextDue(session), .integer(session.version),
            .blob(session.stateBytes), .integer(ord), .integer(nowMs),
        ])
        return database.changes == 1
    }

    func updateUid(ord: Int64, uid: String) throws(StoreError) {
        try run(statements.updateUid, [.text(uid), .integer(ord)])
    }

    func insertEntries(ord: Int64, _ entries: [EncodedEntry]) throws(StoreError) {
        for entry in entries {
            try run(statements.insertEntry, [.integer(ord), .integer(entry.seq), .text(entry.kind), .blob(entry.json)])
            if let code = entry.violation {
                try run(statements.insertViolation, [.integer(ord), .integer(entry.seq), .text(code)])
            }
        }
    }

    func records(ord: Int64, requestIds: [String]) throws(StoreError) -> [String: [UInt8]] {
        guard !requestIds.isEmpty else { return [:] }
        // One id (most inputs): the point lookup, without the JSON array json_each reads.
        let (statement, ids) = requestIds.count == 1
            ? (statements.selectRecord, requestIds[0])
            : (statements.selectRecords, JSON.array(requestIds.map(JSON.string)).serialized())
        let found = try rows(statement, [.integer(ord), .text(ids)]) { ($0.text(0) ?? "", $0.blob(1)) }
        return Dictionary(found) { _, last in last }
    }

    func saveRecords(ord: Int64, _ records: [RequestRecord]) throws(StoreError) {
        for record in records {
            try run(statements.upsertRecord, [.integer(ord), .text(record.requestId), .blob(record.stateBytes)])
        }
    }

    func idempotency(ord: Int64, key: String) throws(StoreError) -> (fingerprint: [UInt8], answer: [UInt8])? {
        try rows(statements.selectIdempotency, [.integer(ord), .text(key)]) { (fingerprint: $0.blob(0), answer: $0.blob(1)) }.first
    }

    func insertIdempotency(ord: Int64, key: String, fingerprint: [UInt8], answer: [UInt8], createdMs: Millis) throws(StoreError) {
        try run(statements.insertIdempotency, [.integer(ord), .text(key), .blob(fingerprint), .blob(answer), .integer(createdMs)])
    }

    func forgetIdempotency(createdBefore: Millis) throws(StoreError) {
        try run(statements.purgeIdempotency, [.integer(createdBefore)])
    }

    /// One server per file: its own observers are all there is to tell.
    func announce(changed ids: [String], wallTimers: [String]) throws(StoreError) {}

    func savepoint() throws(StoreError) { try run(statements.savepoint) }
    func releaseSavepoint() throws(StoreError) { try run(statements.releaseSavepoint) }
    func rollbackToSavepoint() throws(StoreError) { try run(statements.rollbackToSavepoint) }

    // MARK: Removal and forks

    func sessionsToPurge(label: String?) throws(StoreError) -> [(ord: Int64, id: String)] {
        try rows(statements.sessionsToPurge, [.text(label), .text(label)]) { (ord: $0.int64(0), id: $0.text(1) ?? "") }
    }

    func closedSessions(closedBeforeMs: Millis) throws(StoreError) -> [(ord: Int64, id: String)] {
        try rows(statements.expiredRetention, [.integer(closedBeforeMs)]) { (ord: $0.int64(0), id: $0.text(1) ?? "") }
    }

    func hide(ord: Int64) throws(StoreError) {
        try run(statements.hideSession, [.integer(ord)])
    }

    func reclaim(ord: Int64, rows count: Int) throws(StoreError) -> Int {
        let chunk: [SQLiteValue] = [.integer(ord), .integer(count)]
        var removed = 0
        for statement in [statements.reclaimTimeline, statements.reclaimViolations, statements.reclaimRequests] {
            try run(statement, chunk)
            removed += database.changes
        }
        if removed == 0 {
            try run(statements.reclaimIdempotency, [.integer(ord)])
            try run(statements.purgeSession, [.integer(ord)])
        }
        return removed
    }

    func status(ord: Int64) throws(StoreError) -> Int? {
        try rows(statements.sessionStatus, [.integer(ord)]) { $0.int(0) }.first
    }

    func copyRecords(to copy: Int64, from source: Int64) throws(StoreError) {
        try run(statements.copyRequests, [.integer(copy), .integer(source)])
    }

    func copyEntries(to copy: Int64, from source: Int64, after: Int, upTo: Int) throws(StoreError) {
        let range: [SQLiteValue] = [.integer(copy), .integer(source), .integer(Int64(after)), .integer(Int64(upTo))]
        try run(statements.copyTimelineRange, range)
        try run(statements.copyViolationsRange, range)
    }

    func reveal(ord: Int64, id: String, _ session: HostSession, nowMs: Millis) throws(StoreError) {
        try run(statements.revealSession, [
            .text(id), .text(session.uid), .text(session.config.label), .integer(session.isClosed ? 1 : 0),
            Self.nextDue(session), .integer(ord), .integer(nowMs), .integer(session.version), .blob(session.stateBytes),
        ])
    }
}

/// The SQLite store `todaysim migrate` copies from, opened as `serve` opens it — refused when
/// another todaysim serves it (its lock), when it is another program's file or a newer
/// todaysim's, checked for damage, upgraded in place when older — and held, lock and all, until
/// the copy is done, so nothing writes it meanwhile. Rows are read in pages in key order;
/// hidden sessions (`closed = 2`: being removed, or a fork a crash cut short) and their rows
/// are left out.
final class MigrationSource {
    /// A session row, every column as stored.
    struct Session {
        var ord: Int64
        var id: String
        var uid: String
        var label: String?
        var closed: Int
        var clock: String
        var wallOriginMs: Int64
        var nextDueMs: Int64?
        var version: Int64
        var state: [UInt8]
        var ttlMs: Int64?
        var lastActiveMs: Int64?
        var closedAtMs: Int64?
    }

    struct Record {
        var requestId: String
        var record: [UInt8]
    }

    struct Key {
        var key: String
        var fingerprint: [UInt8]
        var response: [UInt8]
        var createdMs: Int64
    }

    struct Violation {
        var ord: Int64
        var session: Int64
        var seq: Int
        var code: String
    }

    private let storage: SQLiteStorage
    private let sessionPage: Statement
    private let timelinePage: Statement
    private let requestPage: Statement
    private let keyPage: Statement
    private let violationPage: Statement
    /// A page holds `rowLimit` rows, or fewer once they hold `byteBudget` bytes (one row at least).
    private let rowLimit: Int
    private let byteBudget: Int

    init(path: String, rowLimit: Int, byteBudget: Int) throws(StoreError) {
        storage = try SQLiteStorage(path: path, durability: .normal)
        self.rowLimit = rowLimit
        self.byteBudget = byteBudget
        let database = storage.database
        do {
            sessionPage = try database.prepare("""
                SELECT ord, id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms,
                       last_active_ms, closed_at_ms
                FROM sessions WHERE closed < 2 AND ord > ? ORDER BY ord LIMIT ?
                """)
            timelinePage = try database.prepare(
                "SELECT seq, kind, entry FROM timeline WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?")
            // Text keys page from NULL (before every key, the empty one too).
            requestPage = try database.prepare("""
                SELECT request_id, record FROM requests WHERE session = ?1 AND (?2 IS NULL OR request_id > ?2)
                ORDER BY request_id LIMIT ?3
                """)
            keyPage = try database.prepare("""
                SELECT key, fingerprint, response, created_ms FROM idempotency WHERE session = ?1 AND (?2 IS NULL OR key > ?2)
                ORDER BY key LIMIT ?3
                """)
            violationPage = try database.prepare("""
                SELECT v.ord, v.session, v.seq, v.code FROM violations v JOIN sessions s ON s.ord = v.session
                WHERE s.closed < 2 AND v.ord > ? ORDER BY v.ord LIMIT ?
                """)
        } catch {
            throw .database(error)
        }
    }

    /// Releases the file (and its lock).
    func close() { storage.close() }

    func sessions(after ord: Int64) throws(StoreError) -> [Session] {
        try page(sessionPage, [.integer(ord)], size: { $0.state.count }) { row in
            Session(ord: row.int64(0), id: row.text(1) ?? "", uid: row.text(2) ?? "", label: row.text(3),
                    closed: row.int(4), clock: row.text(5) ?? "", wallOriginMs: row.int64(6),
                    nextDueMs: Self.optional(row, 7), version: row.int64(8), state: row.blob(9),
                    ttlMs: Self.optional(row, 10), lastActiveMs: Self.optional(row, 11), closedAtMs: Self.optional(row, 12))
        }
    }

    func entries(of session: Int64, after seq: Int) throws(StoreError) -> [EncodedEntry] {
        try page(timelinePage, [.integer(session), .integer(seq)], size: { $0.json.count }) { row in
            EncodedEntry(seq: row.int(0), kind: row.text(1) ?? "", json: row.blob(2), violation: nil)
        }
    }

    func records(of session: Int64, after requestId: String?) throws(StoreError) -> [Record] {
        try page(requestPage, [.integer(session), .text(requestId)], size: { $0.record.count }) { row in
            Record(requestId: row.text(0) ?? "", record: row.blob(1))
        }
    }

    func keys(of session: Int64, after key: String?) throws(StoreError) -> [Key] {
        try page(keyPage, [.integer(session), .text(key)], size: { $0.fingerprint.count + $0.response.count }) { row in
            Key(key: row.text(0) ?? "", fingerprint: row.blob(1), response: row.blob(2), createdMs: row.int64(3))
        }
    }

    /// Violations across sessions in the order they were recorded (`GET /v1/violations`).
    func violations(after ord: Int64) throws(StoreError) -> [Violation] {
        try page(violationPage, [.integer(ord)], size: { $0.code.utf8.count + 16 }) { row in
            Violation(ord: row.int64(0), session: row.int64(1), seq: row.int(2), code: row.text(3) ?? "")
        }
    }

    /// One page of `statement` (whose last parameter is the row limit).
    private func page<Row>(_ statement: Statement, _ values: [SQLiteValue], size: (Row) -> Int,
                           _ read: (Statement) -> Row) throws(StoreError) -> [Row] {
        do {
            try statement.bind(values + [.integer(rowLimit)])
            var rows: [Row] = []
            var bytes = 0
            // The next `bind` resets a statement left mid-page.
            while bytes < byteBudget, try statement.step() {
                let row = read(statement)
                rows.append(row)
                bytes += size(row)
            }
            return rows
        } catch {
            throw .database(error)
        }
    }

    private static func optional(_ row: Statement, _ column: Int32) -> Int64? {
        row.isNull(column) ? nil : row.int64(column)
    }
}

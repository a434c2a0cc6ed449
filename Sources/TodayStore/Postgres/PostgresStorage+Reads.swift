import Foundation
import TodayHost

/// What `PostgresStorage` reads, each on a read connection of its pool (`reading`), as
/// `SQLiteStorage`'s reads are beside its writes.
extension PostgresStorage {
    func session(id: String) throws(StoreError) -> SessionRow? {
        try reading { connection throws(PostgresError) in try PostgresTransaction.sessionRows(try connection.run("select_session", [.text(id)])).first }
    }

    func versions(of ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        let result = try reading { connection throws(PostgresError) in try connection.run("session_versions", [PostgresValue.textArray(ids)]) }
        return try PostgresTransaction.versions(result)
    }

    func sessionCounts() throws(StoreError) -> [(closed: Int, count: Int)] {
        try reading { connection throws(PostgresError) in
            let result = try connection.run("session_counts")
            return try (0..<result.rowCount).map { row throws(PostgresError) in
                (closed: Int(try result.int64(row, 0)), count: Int(try result.int64(row, 1)))
            }
        }
    }

    func listSessions(afterOrd: Int64, uid: String?, label: String?, closed: Bool?, limit: Int) throws(StoreError) -> [SessionRow] {
        try reading { connection throws(PostgresError) in
            let result = try connection.run("list_sessions", [
                .int64(afterOrd), .text(uid), .text(label), closed.map { .int($0 ? 1 : 0) } ?? .null, .int(limit),
            ])
            return try PostgresTransaction.sessionRows(result)
        }
    }

    func timeline(id: String, ord: Int64, after seq: Int, kind: String?, limit: Int) throws(StoreError) -> [(seq: Int, entry: [UInt8])]? {
        try reading { connection throws(PostgresError) in
            let result = try connection.run("stored_timeline_page", [.int64(ord), .int(seq), .text(kind), .int(limit), .text(id)])
            guard result.rowCount > 0, try result.int64(0, 0) == 1 else { return nil }
            return try (0..<result.rowCount).filter { !result.isNull($0, 1) }.map { row throws(PostgresError) in
                (seq: Int(try result.int64(row, 1)), entry: try result.bytes(row, 2))
            }
        }
    }

    func reportRows(id: String, ord: Int64) throws(StoreError) -> (violations: [[UInt8]], records: [[UInt8]])? {
        try reading { connection throws(PostgresError) in
            let violations = try connection.run("timeline_page", [.int64(ord), .int(0), .text("violation"), .int64(Int64.max)])
            let records = try connection.run("session_records", [.int64(ord)])
            let rows = (violations: try (0..<violations.rowCount).map { row throws(PostgresError) in try violations.bytes(row, 1) },
                        records: try (0..<records.rowCount).map { row throws(PostgresError) in try records.bytes(row, 0) })
            return try Self.stillStored(id, ord: ord, connection) ? rows : nil
        }
    }

    /// Whether `id` is still stored under `ord` after rows were read by `ord` (see SQLiteStorage).
    private static func stillStored(_ id: String, ord: Int64, _ connection: PostgresConnection) throws(PostgresError) -> Bool {
        let result = try connection.run("session_ord", [.text(id)])
        guard result.rowCount == 1 else { return false }
        return try result.int64(0, 0) == ord
    }

    func violations(after: Int64, uid: String?, label: String?, code: String?, limit: Int) throws(StoreError) -> [(cursor: Int64, sessionId: String, entry: [UInt8])] {
        try reading { connection throws(PostgresError) in
            let result = try connection.run("violations_page", [.int64(after), .text(uid), .text(label), .text(code), .int(limit)])
            return try (0..<result.rowCount).map { row throws(PostgresError) in
                (cursor: try result.int64(row, 0), sessionId: try result.text(row, 1), entry: try result.bytes(row, 2))
            }
        }
    }

    private func column<T>(_ statement: String, _ parameters: [PostgresValue] = [],
                           _ read: (PostgresResult, Int) throws(PostgresError) -> T) throws(StoreError) -> [T] {
        try reading { connection throws(PostgresError) in
            let result = try connection.run(statement, parameters)
            return try (0..<result.rowCount).map { row throws(PostgresError) in try read(result, row) }
        }
    }

    private func optionalNumber(_ statement: String) throws(StoreError) -> Millis? {
        try column(statement) { result, row throws(PostgresError) in result.isNull(row, 0) ? nil : try result.int64(row, 0) }.first ?? nil
    }

    func idleSessions(nowMs: Millis) throws(StoreError) -> [String] {
        try column("idle_sessions", [.int64(nowMs)]) { result, row throws(PostgresError) in try result.text(row, 0) }
    }

    func nextIdleExpiry() throws(StoreError) -> Millis? { try optionalNumber("next_idle_expiry") }

    func earliestClosedAt() throws(StoreError) -> Millis? { try optionalNumber("earliest_closed_at") }

    func dueWallSessions(nowMs: Millis?) throws(StoreError) -> [String] {
        try column("due_wall_sessions", [nowMs.map { .int64($0) } ?? .null]) { result, row throws(PostgresError) in try result.text(row, 0) }
    }

    func nextWallDue() throws(StoreError) -> Millis? { try optionalNumber("next_wall_due") }

    func nextWallDelay() throws(StoreError) -> Millis? { try optionalNumber("next_wall_delay") }

    func databaseNowMs() throws(StoreError) -> Millis {
        try column("database_now") { result, row throws(PostgresError) in try result.int64(row, 0) }.first ?? 0
    }

    func nextRemoving() throws(StoreError) -> Int64? {
        try column("next_removing") { result, row throws(PostgresError) in try result.int64(row, 0) }.first
    }

    func hiddenRows() throws(StoreError) -> Int {
        try column("hidden_rows") { result, row throws(PostgresError) in Int(try result.int64(row, 0)) }.first ?? 0
    }
}

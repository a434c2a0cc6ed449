import Foundation
import TodayHost

/// The shared store: PostgreSQL, which several todaysim servers may use at once. One write
/// connection per server (its group commit batches inputs into one transaction, as on SQLite)
/// and a few read connections. Other servers write the same rows, so every write locks the
/// rows of the sessions it changes (`FOR UPDATE`, in id order: no deadlock between batches)
/// and the store checks its cache against the versions it reads there. Where a write goes:
/// `write` here, the statements in `PostgresTransaction`.
final class PostgresStorage: SessionStorage, @unchecked Sendable {
    let isShared = true
    let health = StorageHealth(path: nil)
    private let uri: String
    private let writeLock = NSLock()
    // Guarded by `writeLock`.
    private var writer: PostgresConnection?
    private var closed = false
    private let readers: PostgresPool

    /// Connects, creating or migrating the schema. A database that cannot be reached is an
    /// error here (the server exits 2); later losses are retried.
    init(uri: String, readConnections: Int = 2) throws(StoreError) {
        self.uri = uri
        let connection = try Self.connect(uri)
        try PostgresSchema.migrate(connection)
        try PostgresTransaction.prepare(connection)
        writer = connection
        readers = PostgresPool(capacity: readConnections) { () throws(StoreError) in try Self.connect(uri) }
    }

    /// A new connection; the password never appears in the error.
    static func connect(_ uri: String) throws(StoreError) -> PostgresConnection {
        do {
            return try PostgresConnection(uri: uri, connectTimeout: 5)
        } catch {
            throw .storageUnavailable("cannot reach PostgreSQL at \(PostgresConnection.redacted(uri)): \(error.message)")
        }
    }

    func close() {
        writeLock.lock()
        closed = true
        writer = nil
        writeLock.unlock()
        readers.close()
    }

    // MARK: Writes

    func write<T>(urgent: Bool, _ body: (any StorageTransaction) throws(StoreError) -> T,
                  committed: (T) -> Void) throws(StoreError) -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        if closed { throw .storageUnavailable("the store is closed") }
        let connection = try writerConnection()
        do {
            _ = try connection.execute("BEGIN")
        } catch {
            throw failed(error)
        }
        do throws(StoreError) {
            let result = try body(PostgresTransaction(connection: connection))
            let commit: PostgresResult
            do { commit = try connection.execute("COMMIT") } catch { throw failed(error) }
            // One failed statement aborts a PostgreSQL transaction; COMMIT then rolls back.
            guard commit.commandStatus == "COMMIT" else { throw StoreError.storageUnavailable("the transaction was rolled back") }
            health.committed()
            committed(result)
            return result
        } catch {
            if !connection.isBroken { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// The write connection, reconnected when it was lost (under `writeLock`).
    private func writerConnection() throws(StoreError) -> PostgresConnection {
        if let writer, !writer.isBroken { return writer }
        writer = nil
        do {
            let connection = try Self.connect(uri)
            try PostgresTransaction.prepare(connection)
            writer = connection
            return connection
        } catch {
            health.unreachable(error.description)
            throw error
        }
    }

    /// A PostgreSQL error as the caller answers it: a lost connection makes the storage
    /// unreachable until a write gets through again.
    func failed(_ error: PostgresError) -> StoreError {
        if error.isConnectionLost {
            let cause = "PostgreSQL at \(PostgresConnection.redacted(uri)): \(error.message)"
            health.unreachable(cause)
            return .storageUnavailable(cause)
        }
        return .postgres(error)
    }

    func yieldToWriters() {}

    func probe() {
        guard health.shouldProbe() else { return }
        writeLock.lock()
        defer { writeLock.unlock() }
        guard !closed, let connection = try? writerConnection() else { return }
        if (try? connection.execute("SELECT 1")) != nil { health.committed() }
    }

    // MARK: Reads

    private func reading<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        let connection = try readers.take()
        defer { readers.give(back: connection) }
        do { return try body(connection) } catch { throw failed(error) }
    }

    func session(id: String) throws(StoreError) -> SessionRow? {
        try reading { connection throws(PostgresError) in try PostgresTransaction.sessionRows(try connection.run("select_session", [.text(id)])).first }
    }

    func versions(of ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        let result = try reading { connection throws(PostgresError) in try connection.run("session_versions", [PostgresTransaction.textArray(ids)]) }
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
            let result = try connection.run("timeline_page", [.int64(ord), .int(seq), .text(kind), .int(limit)])
            let rows = try (0..<result.rowCount).map { row throws(PostgresError) in
                (seq: Int(try result.int64(row, 0)), entry: try result.bytes(row, 1))
            }
            return try Self.stillStored(id, ord: ord, connection) ? rows : nil
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

    func dueWallSessions(nowMs: Millis) throws(StoreError) -> [String] {
        try column("due_wall_sessions", [.int64(nowMs)]) { result, row throws(PostgresError) in try result.text(row, 0) }
    }

    func nextWallDue() throws(StoreError) -> Millis? { try optionalNumber("next_wall_due") }

    func nextRemoving() throws(StoreError) -> Int64? {
        try column("next_removing") { result, row throws(PostgresError) in try result.int64(row, 0) }.first
    }
}

/// Read connections, made when first needed and kept; one per concurrent reader up to
/// `capacity` (a reader past it waits for one).
final class PostgresPool: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var idle: [PostgresConnection] = []
    private var made = 0
    private var closed = false
    private let capacity: Int
    private let connect: () throws(StoreError) -> PostgresConnection

    init(capacity: Int, connect: @escaping () throws(StoreError) -> PostgresConnection) {
        self.capacity = max(1, capacity)
        self.connect = connect
    }

    func take() throws(StoreError) -> PostgresConnection {
        condition.lock()
        while idle.isEmpty, made >= capacity, !closed { condition.wait() }
        if closed {
            condition.unlock()
            throw .storageUnavailable("the store is closed")
        }
        if let connection = idle.popLast() {
            condition.unlock()
            if !connection.isBroken { return connection }
            return try replace()
        }
        made += 1
        condition.unlock()
        return try replace()
    }

    /// A new connection for a slot already counted in `made`.
    private func replace() throws(StoreError) -> PostgresConnection {
        do {
            let connection = try connect()
            try PostgresTransaction.prepare(connection)
            return connection
        } catch {
            condition.lock()
            made -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    func give(back connection: PostgresConnection) {
        condition.lock()
        if connection.isBroken || closed { made -= 1 } else { idle.append(connection) }
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}

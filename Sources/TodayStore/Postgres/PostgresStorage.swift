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
    /// Hears what other servers on the database commit.
    private let listener: PostgresListener
    /// What this server's notifications carry, so its listener knows them (`PostgresChannels`).
    private let sender = UUID().uuidString.lowercased()
    private var closed = false
    /// Tests: how many more commits lose their answer (`loseCommitAnswers`).
    private var commitAnswersToLose = 0
    private let readers: PostgresPool
    /// While the database is out of reach: requests answered at once, reconnecting in the background.
    private var outage: PostgresOutage!

    let readConnections: Int
    /// How long one statement may take (`PostgresConnection.deadline`): a server's statements
    /// take milliseconds (a group commit's set-wise flush, a row lock held by another server's
    /// commit), so past this the database is taken as frozen — the connection is given up, the
    /// request answered `503`, and the background reconnects. `serve --statement-timeout-seconds`
    /// (default 5 s, `defaultStatementDeadline`); a test that must act while a statement waits
    /// sets a long one instead of racing the default.
    let statementDeadline: Duration
    static let defaultStatementDeadline: Duration = .seconds(5)
    private let time: any TimeSource

    /// Connects, creating or migrating the schema. A database that cannot be reached is an
    /// error here (the server exits 2); later losses are retried (`PostgresOutage`).
    /// `time`: what the statement deadline and the reconnect backoffs are measured on.
    init(uri: String, readConnections: Int = 2, statementDeadline: Duration = PostgresStorage.defaultStatementDeadline,
         time: any TimeSource = SystemTime()) throws(StoreError) {
        self.readConnections = max(1, readConnections)
        self.uri = uri
        self.statementDeadline = statementDeadline
        self.time = time
        let connection = try Self.connect(uri, deadline: statementDeadline, time: time)
        try PostgresSchema.migrate(connection)
        try PostgresTransaction.prepare(connection)
        listener = PostgresListener(uri: uri, sender: sender, time: time)
        writer = connection
        readers = PostgresPool(capacity: readConnections) { () throws(StoreError) in
            try Self.connect(uri, deadline: statementDeadline, time: time)
        }
        outage = PostgresOutage(health: health, time: time) { [weak self] () throws(StoreError) in try self?.reconnectWriter() }
    }

    /// A new connection whose statements each end by `deadline` on `time`; the password never
    /// appears in the error. The connect timeout stays 5 s (libpq counts whole seconds).
    static func connect(_ uri: String, deadline: Duration, time: any TimeSource = SystemTime()) throws(StoreError) -> PostgresConnection {
        do {
            return try PostgresConnection(uri: uri, connectTimeout: 5, deadline: deadline, time: time)
        } catch {
            throw .storageUnavailable("cannot reach PostgreSQL at \(PostgresConnection.redacted(uri)): \(error.message)")
        }
    }

    func close() {
        listener.stop()
        outage.close()
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
        // Known down: answered at once. Only the background connects again (a request that
        // did could wait out a whole connect timeout).
        try outage.check()
        guard let connection = writer else { throw lost("the write connection is being reopened") }
        do {
            _ = try connection.execute("BEGIN")
        } catch {
            if error.isConnectionLost { writer = nil }
            throw failed(error)
        }
        let result: T
        do throws(StoreError) {
            let transaction = PostgresTransaction(connection: connection, sender: sender)
            result = try body(transaction)
            try transaction.flush()
        } catch {
            // `PostgresTransaction` reports a statement that lost its connection as
            // `storageUnavailable`; the server rolls back the transaction of a connection that ended.
            if case .storageUnavailable = error {
                writer = nil
                _ = lost(error.description)
            } else if (try? connection.execute("ROLLBACK")) == nil {
                writer = nil
            }
            throw error
        }
        let commit: PostgresResult
        do {
            commit = try connection.execute("COMMIT")
            try loseCommitAnswerIfAsked()
        } catch {
            throw commitFailed(error)
        }
        // One failed statement aborts a PostgreSQL transaction; COMMIT then rolls back.
        guard commit.commandStatus == "COMMIT" else { throw .storageUnavailable("the transaction was rolled back") }
        committed(result)
        return result
    }

    /// A failed COMMIT. Without a connection its outcome is unknown: PostgreSQL may have
    /// committed before the answer was lost, so it is never acknowledged, and the cache keeps
    /// nothing of it (`committed` does not run; the shared store checks every cached session
    /// against its stored version before use, so a commit that did happen is read back).
    private func commitFailed(_ error: PostgresError) -> StoreError {
        guard error.isConnectionLost else {
            if (try? writer?.execute("ROLLBACK")) == nil { writer = nil }
            return .postgres(error)
        }
        writer = nil
        let cause = "PostgreSQL at \(PostgresConnection.redacted(uri)): \(error.message)"
        _ = lost(cause)
        return .outcomeUnknown(cause)
    }

    /// Tests: the next `count` commits happen but their answer is lost, as when the connection
    /// breaks while PostgreSQL commits.
    func loseCommitAnswers(_ count: Int) {
        writeLock.lock()
        commitAnswersToLose = count
        writeLock.unlock()
    }

    private func loseCommitAnswerIfAsked() throws(PostgresError) {
        guard commitAnswersToLose > 0 else { return }
        commitAnswersToLose -= 1
        throw PostgresError(sqlState: nil, message: "server closed the connection unexpectedly (injected by a test after COMMIT)",
                            sql: "COMMIT", connectionBroken: true)
    }

    /// In the background, while known down: a new write connection, checked with a round trip.
    private func reconnectWriter() throws(StoreError) {
        let connection = try Self.connect(uri, deadline: statementDeadline, time: time)
        try PostgresTransaction.prepare(connection)
        writeLock.lock()
        defer { writeLock.unlock() }
        if !closed { writer = connection }
    }

    /// A PostgreSQL error as the caller answers it: a lost connection makes the storage
    /// unreachable until the background connects again.
    func failed(_ error: PostgresError) -> StoreError {
        guard error.isConnectionLost else { return .postgres(error) }
        return lost("PostgreSQL at \(PostgresConnection.redacted(uri)): \(error.message)")
    }

    /// Notes the database out of reach; returns the error requests get meanwhile.
    private func lost(_ cause: String) -> StoreError {
        readers.discardIdle()
        outage.lost(cause)
        return .storageUnavailable(cause)
    }

    func yieldToWriters() {}

    func followOtherServers(_ receive: @escaping @Sendable (RemoteChange) -> Void) {
        listener.start(receive)
    }

    /// Tests: stops hearing from other servers (`held`) until called again with `false`.
    func holdListening(_ held: Bool) { listener.hold(held) }

    /// For `/readyz`. Known down, the background is at it; otherwise an idle write connection
    /// the server ended shows here without a round trip, and starts the reconnecting.
    func probe() {
        guard !outage.isDown, writeLock.try() else { return }
        defer { writeLock.unlock() }
        guard !closed, let writer, writer.wasEndedWhileIdle else { return }
        self.writer = nil
        _ = lost("PostgreSQL at \(PostgresConnection.redacted(uri)) ended the connection")
    }

    // MARK: Reads

    private func reading<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        try outage.check()
        let connection: PostgresConnection
        do {
            connection = try readers.take()
        } catch {
            throw lost(error.description)
        }
        defer { readers.give(back: connection) }
        do { return try body(connection) } catch { throw failed(error) }
    }

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

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
    let health: StorageHealth
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
        health = StorageHealth(path: nil, time: time)
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

    /// Runs `body` on a read connection; at once `storage_unavailable` while the database is
    /// known down (`PostgresStorage+Reads` holds the reads).
    func reading<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
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
}

import Foundation
import TodayHost

/// The embedded store: one SQLite file, one process (`DatabaseLock`). One write connection
/// behind `writeLock` serializes every write; reads of timelines and lists use a second
/// connection, which WAL lets read beside the writer. Where a write goes: `write` here, the
/// statements in `SQLiteTransaction`.
final class SQLiteStorage: SessionStorage, @unchecked Sendable {
    private let writeLock = NSLock()
    // Guarded by `writeLock`.
    let database: Database
    let statements: StoreStatements
    private var closed = false
    /// Tests: how many of the next commits fail as on a full disk (guarded by `writeLock`).
    var failingCommitsForTesting = 0
    private let readLock = NSLock()
    // Guarded by `readLock`; `nil` for `:memory:` (a second connection would see another database).
    private let readStatements: StoreStatements?
    private let checkpointer: WALCheckpointer?
    private let fileLock: DatabaseLock?
    private let path: String
    /// The group-commit writer's turns at `writeLock` between a long job's chunks. Their bound
    /// (50 ms) is on this machine's clock, not a test's: it is how long a thread is let wait for
    /// another to be scheduled, and on a clock that never moves it would wait for a quiet moment.
    private let writerTurns = WriterTurns(time: SystemTime())
    let health: StorageHealth
    let isShared = false
    /// One read connection (and the cache is never checked: nothing else writes the file).
    let readConnections = 1

    /// Opens (creating and migrating) the database at `path`, or `:memory:`. Refuses, before
    /// SQLite touches it, a file another todaysim serves or another program's file; refuses a
    /// read-only or damaged one. `time`: what the probes' interval and the checkpoints' are
    /// measured on (a test's clock, moved).
    init(path: String, durability: Durability, time: any TimeSource = SystemTime()) throws(StoreError) {
        self.path = path
        let onDisk = path != ":memory:"
        health = StorageHealth(path: onDisk ? path : nil, time: time)
        // The header first: another program's file gets not even a lock file beside it.
        let unmarked = onDisk ? try DatabaseFile.admit(path, supportedVersion: Schema.currentVersion) : true
        fileLock = onDisk ? try DatabaseLock(databasePath: path) : nil
        do {
            database = try Database(path: path)
        } catch {
            throw .database(error)
        }
        if onDisk {
            guard !database.isReadOnly else { throw .unusable(path: path, reason: "it is read-only for this process") }
            try Schema.check(database, path: path)
        }
        try Schema.migrate(database, durability: durability, mark: unmarked)
        // The mark and the schema into the main file now: the next process reads them from
        // the header before it opens anything.
        if onDisk { try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        do {
            // A fork a crash interrupted is removed like any removed session.
            try database.execute("UPDATE sessions SET id = 'removing/' || ord WHERE closed = 2 AND id LIKE 'forking/%'")
            statements = try StoreStatements(database)
            readStatements = onDisk ? try StoreStatements(try Database(path: path)) : nil
            if onDisk {
                checkpointer = try WALCheckpointer(path: path, durability: durability, time: time)
                try database.execute("PRAGMA wal_autocheckpoint = \(WALCheckpointer.writerFallbackPages)")
                // A WAL that grew (a burst, a full disk) shrinks back to this at its next reset.
                try database.execute("PRAGMA journal_size_limit = \(16 << 20)")
            } else {
                checkpointer = nil
            }
        } catch {
            throw .database(error)
        }
    }

    func close() {
        checkpointer?.stop()
        writeLock.lock()
        closed = true
        writeLock.unlock()
        fileLock?.release()
    }

    deinit {
        checkpointer?.stop()
        fileLock?.release()
    }

    // MARK: Writes

    /// `BEGIN IMMEDIATE … COMMIT` under the write lock; any error rolls everything back.
    func write<T>(urgent: Bool, _ body: (any StorageTransaction) throws(StoreError) -> T,
                  committed: (T) -> Void) throws(StoreError) -> T {
        if urgent { writerTurns.waitingBegan() }
        writeLock.lock()
        if urgent { writerTurns.waitingEnded() }
        defer { writeLock.unlock() }
        do throws(StoreError) {
            try checkWritable()
            try run(statements.begin)
            let result = try body(SQLiteTransaction(database: database, statements: statements))
            try commitInPlace()
            committed(result)
            return result
        } catch {
            try? statements.rollback.run()
            throw health.failed(error)
        }
    }

    func yieldToWriters() { writerTurns.yield() }

    /// Under the write lock: refuses to write to a closed store or to a file that has moved.
    private func checkWritable() throws(StoreError) {
        if closed { throw .storageUnavailable("the store is closed") }
        try health.checkWritable()
    }

    /// Under the write lock: commits, then makes sure the commit went to the file at `path`.
    /// A database deleted or replaced under the server (issue 12, item 5) still takes commits
    /// into the unlinked file, which no one will open again: those are not acknowledged.
    private func commitInPlace() throws(StoreError) {
        try failIfInjected(consuming: true)
        try run(statements.commit)
        if path != ":memory:", database.fileHasMoved {
            health.moved(path)
            try health.checkWritable()
        }
        if health.committed() {
            // Back from a full disk: give the WAL's space back now rather than at the next
            // checkpoint.
            try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Tests: fails as a full disk would while `failingCommitsForTesting` says so.
    private func failIfInjected(consuming: Bool) throws(StoreError) {
        guard failingCommitsForTesting > 0 else { return }
        if consuming { failingCommitsForTesting -= 1 }
        throw .database(SQLiteError(code: 13, message: "database or disk is full (injected)", sql: "COMMIT"))
    }

    /// Tests: makes the next `count` commits fail as on a full disk.
    func failNextCommit(count: Int) {
        writeLock.lock()
        failingCommitsForTesting = count
        writeLock.unlock()
    }

    var injectedFailuresLeft: Int {
        writeLock.lock()
        defer { writeLock.unlock() }
        return failingCommitsForTesting
    }

    func probe() {
        guard health.shouldProbe() else { return }
        writeLock.lock()
        defer { writeLock.unlock() }
        guard !closed, (try? health.checkWritable()) != nil else { return }
        do throws(StoreError) {
            try run(statements.begin)
            try run(statements.touchMarker)
            try failIfInjected(consuming: false)
            try run(statements.commit)
            health.probed()
        } catch {
            try? statements.rollback.run()
            _ = health.failed(error)
        }
    }

    private func run(_ statement: Statement) throws(StoreError) {
        do { try statement.run([]) } catch { throw .database(error) }
    }

    // MARK: Reads

    /// A read on the read connection (or, in memory, on the writer's).
    private func reading<T>(_ body: (StoreStatements) throws(SQLiteError) -> T) throws(StoreError) -> T {
        let lock = readStatements == nil ? writeLock : readLock
        lock.lock()
        defer { lock.unlock() }
        do { return try body(readStatements ?? statements) } catch { throw .database(error) }
    }

    /// A read on the write connection, between writes: what the background jobs act on next.
    private func readingWriter<T>(_ body: (StoreStatements) throws(SQLiteError) -> T) throws(StoreError) -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        do { return try body(statements) } catch { throw .database(error) }
    }

    func session(id: String) throws(StoreError) -> SessionRow? {
        try reading { statements throws(SQLiteError) in try statements.sessionRow(id: id) }
    }

    func versions(of ids: [String]) throws(StoreError) -> [String: StoredVersion] {
        try reading { statements throws(SQLiteError) in try Self.versions(of: ids, statements) }
    }

    static func versions(of ids: [String], _ statements: StoreStatements) throws(SQLiteError) -> [String: StoredVersion] {
        var versions: [String: StoredVersion] = [:]
        for id in ids {
            if let version = try statements.sessionVersion.rows([.text(id)], { StoredVersion(ord: $0.int64(0), revision: $0.int(1)) }).first {
                versions[id] = version
            }
        }
        return versions
    }

    func sessionCounts() throws(StoreError) -> [(closed: Int, count: Int)] {
        try reading { statements throws(SQLiteError) in try statements.sessionsByStatus.rows { ($0.int(0), $0.int(1)) } }
    }

    func listSessions(afterOrd: Int64, uid: String?, label: String?, closed: Bool?, limit: Int) throws(StoreError) -> [SessionRow] {
        let closedValue: SQLiteValue = closed.map { .integer($0 ? 1 : 0) } ?? .null
        return try reading { statements throws(SQLiteError) in
            try statements.listSessions.rows([
                .integer(afterOrd), .text(uid), .text(uid), .text(label), .text(label), closedValue, closedValue,
                .integer(limit),
            ]) { SessionRow(ord: $0.int64(0), wallOriginMs: $0.int64(1), state: $0.blob(2)) }
        }
    }

    func timeline(id: String, ord: Int64, after seq: Int, kind: String?, limit: Int) throws(StoreError) -> [(seq: Int, entry: [UInt8])]? {
        try reading { statements throws(SQLiteError) in
            let statement = kind == nil ? statements.timelinePage : statements.timelinePageOfKind
            var values: [SQLiteValue] = [.integer(ord), .integer(seq)]
            if let kind { values.append(.text(kind)) }
            values.append(.integer(limit))
            let rows = try statement.rows(values) { (seq: $0.int(0), entry: $0.blob(1)) }
            return try Self.stillStored(id, ord: ord, statements) ? rows : nil
        }
    }

    func reportRows(id: String, ord: Int64) throws(StoreError) -> (violations: [[UInt8]], records: [[UInt8]])? {
        try reading { statements throws(SQLiteError) in
            let rows = (violations: try statements.timelinePageOfKind.rows([.integer(ord), .integer(0), .text("violation"), .integer(Int64.max)]) { $0.blob(1) },
                        records: try statements.sessionRecords.rows([.integer(ord)]) { $0.blob(0) })
            return try Self.stillStored(id, ord: ord, statements) ? rows : nil
        }
    }

    /// Whether `id` is still stored under `ord` after rows were read by `ord`: a session removed
    /// meanwhile frees its `ord` once its rows are deleted, and a new session may take it —
    /// its rows must never be answered for the removed one.
    private static func stillStored(_ id: String, ord: Int64, _ statements: StoreStatements) throws(SQLiteError) -> Bool {
        try statements.sessionOrd.rows([.text(id)]) { $0.int64(0) }.first == ord
    }

    func violations(after: Int64, uid: String?, label: String?, code: String?, limit: Int) throws(StoreError) -> [(cursor: Int64, sessionId: String, entry: [UInt8])] {
        try reading { statements throws(SQLiteError) in
            try statements.violationsPage.rows([
                .integer(after), .text(uid), .text(uid), .text(label), .text(label), .text(code), .text(code),
                .integer(limit),
            ]) { (cursor: $0.int64(0), sessionId: $0.text(1) ?? "", entry: $0.blob(2)) }
        }
    }

    func idleSessions(nowMs: Millis) throws(StoreError) -> [String] {
        try readingWriter { statements throws(SQLiteError) in try statements.idleSessions.rows([.integer(nowMs)]) { $0.text(0) ?? "" } }
    }

    func nextIdleExpiry() throws(StoreError) -> Millis? {
        try readingWriter { statements throws(SQLiteError) in
            try statements.nextIdleExpiry.rows { $0.isNull(0) ? nil : $0.int64(0) }.first ?? nil
        }
    }

    func earliestClosedAt() throws(StoreError) -> Millis? {
        try readingWriter { statements throws(SQLiteError) in
            try statements.earliestClosedAt.rows { $0.isNull(0) ? nil : $0.int64(0) }.first ?? nil
        }
    }

    func dueWallSessions(nowMs: Millis?) throws(StoreError) -> [String] {
        let now = nowMs ?? databaseNowMs()
        return try readingWriter { statements throws(SQLiteError) in try statements.dueWallSessions.rows([.integer(now)]) { $0.text(0) ?? "" } }
    }

    func nextWallDue() throws(StoreError) -> Millis? {
        try readingWriter { statements throws(SQLiteError) in try statements.nextWallDue.rows { $0.int64(0) }.first }
    }

    func nextWallDelay() throws(StoreError) -> Millis? {
        try nextWallDue().map { $0 - databaseNowMs() }
    }

    /// One server holds the file: its clock is the only one.
    func databaseNowMs() -> Millis { SessionStore.systemUnixNow() }

    func nextRemoving() throws(StoreError) -> Int64? {
        try readingWriter { statements throws(SQLiteError) in try statements.nextRemoving.rows { $0.int64(0) }.first }
    }

    func hiddenRows() throws(StoreError) -> Int {
        try readingWriter { statements throws(SQLiteError) in try statements.hiddenRows.rows { Int($0.int64(0)) }.first ?? 0 }
    }

    /// One server per file: no other writes to hear of.
    func followOtherServers(_ receive: @escaping @Sendable (RemoteChange) -> Void) {}
}

import Foundation
import TodayHost

/// Sessions, their timelines and request ledgers in one SQLite database. Every accepted input
/// is one transaction that loads the session, applies the input, and writes the new state with
/// all of its timeline entries and ledger records before returning. One lock serializes the
/// connection, and so every input to a session.
public final class SessionStore: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private let database: Database
    private let statements: StoreStatements
    private let unixNow: @Sendable () -> Millis
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    public static let systemUnixNow: @Sendable () -> Millis = {
        Millis((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Opens (creating and migrating) the database at `path`, or `:memory:`.
    public init(path: String, durability: Durability = .normal,
                unixNow: @escaping @Sendable () -> Millis = SessionStore.systemUnixNow) throws(StoreError) {
        do {
            database = try Database(path: path)
        } catch {
            throw .database(error)
        }
        try Schema.migrate(database, durability: durability)
        do {
            statements = try StoreStatements(database)
        } catch {
            throw .database(error)
        }
        self.unixNow = unixNow
        encoder.outputFormatting = [.sortedKeys]
    }

    private func locked<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: Writes

    /// Creates a session (H1): `id` is the caller's or a new UUID.
    public func create(id: String?, config: SessionConfig) throws(StoreError) -> (Applied, StoredSession) {
        try locked { () throws(StoreError) in
            let sessionId = id ?? UUID().uuidString.lowercased()
            let created: (HostSession, Applied)
            do throws(InputError) {
                created = try HostSession.create(id: sessionId, config: config)
            } catch {
                throw .input(error)
            }
            return try writing { () throws(StoreError) in
                guard try statements.sessionRow(id: sessionId) == nil else { throw StoreError.sessionExists(sessionId) }
                let (session, applied) = created
                let origin = unixNow()
                try run(statements.insertSession, [
                    .text(sessionId), .text(session.uid), .text(session.config.label), .integer(0),
                    .text(session.config.clock.rawValue), .integer(origin), nextDue(session), .integer(session.version),
                    .blob(try encode(session)),
                ])
                let stored = StoredSession(session: session, wallOriginMs: origin, ord: try statements.lastOrd())
                try append(applied.entries, ord: stored.ord)
                return (applied, stored)
            }
        }
    }

    /// Applies one input to session `id` and commits it with everything it wrote. A `wall`
    /// session first catches up with the real clock, in the same transaction.
    public func apply(_ input: Input, to id: String) throws(StoreError) -> (Applied, StoredSession) {
        try locked { () throws(StoreError) in
            try writing { () throws(StoreError) in
                var stored = try load(id)
                let ledger = SQLiteLedger(select: statements.selectRecord, session: stored.ord)
                var entries: [TimelineEntry] = []
                if stored.isWall, let caught = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: unixNow()), ledger: ledger) {
                    try saveRecords(caught.ledgerWrites, ord: stored.ord)
                    entries += caught.entries
                }
                var applied: Applied
                do throws(InputError) {
                    applied = try stored.session.apply(input, ledger: ledger)
                } catch {
                    throw .input(error)
                }
                if let failure = ledger.failure { throw failure }
                try saveRecords(applied.ledgerWrites, ord: stored.ord)
                try save(stored)
                try append(entries + applied.entries, ord: stored.ord)
                applied.entries = entries + applied.entries
                return (applied, stored)
            }
        }
    }

    /// Fires the timers of every `wall` session that fell due by now (C1), each session in its
    /// own transaction. Returns the ids of the sessions that changed.
    @discardableResult
    public func fireDueWallTimers() throws(StoreError) -> [String] {
        try locked { () throws(StoreError) in
            let now = unixNow()
            let due = try readRows { () throws(SQLiteError) in try statements.dueWallSessions.rows([.integer(now)]) { $0.text(0)! } }
            for id in due {
                _ = try writing { () throws(StoreError) in try catchUp(try load(id), persist: true) }
            }
            return due
        }
    }

    /// Unix time (ms) of the earliest pending timer among `wall` sessions.
    public func nextWallDueUnixMs() throws(StoreError) -> Millis? {
        try locked { () throws(StoreError) in
            try readRows { () throws(SQLiteError) in try statements.nextWallDue.rows { $0.int64(0) } }.first
        }
    }

    // MARK: Reads

    /// The session `id`; a `wall` session caught up with the real clock first.
    public func session(_ id: String) throws(StoreError) -> StoredSession {
        try locked { () throws(StoreError) in
            let stored = try load(id)
            guard stored.isWall else { return stored }
            return try writing { () throws(StoreError) in try catchUp(stored, persist: true) }
        }
    }

    public struct SessionPage: Sendable {
        public var sessions: [StoredSession]
        /// The cursor of the next page; `nil` at the end.
        public var next: String?
    }

    /// Sessions oldest first, filtered by `uid`, `label` and closed-ness.
    public func list(uid: String?, label: String?, closed: Bool?, limit: Int, after cursor: String?) throws(StoreError) -> SessionPage {
        let afterOrd = cursor.flatMap { Int64($0) } ?? 0
        return try locked { () throws(StoreError) in
            let rows = try readRows { () throws(SQLiteError) in
                try statements.listSessions.rows([
                    .integer(afterOrd), .text(uid), .text(uid), .text(label), .text(label),
                    closed.map { .integer($0 ? 1 : 0) } ?? .null, closed.map { .integer($0 ? 1 : 0) } ?? .null,
                    .integer(limit + 1),
                ]) { ($0.int64(0), $0.int64(1), $0.blob(2)) }
            }
            var sessions: [StoredSession] = []
            for (ord, origin, blob) in rows.prefix(limit) {
                var stored = StoredSession(session: try decode(blob), wallOriginMs: origin, ord: ord)
                if stored.isWall { _ = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: unixNow()), ledger: NoLedger()) }
                sessions.append(stored)
            }
            let next = rows.count > limit ? sessions.last.map { String($0.ord) } : nil
            return SessionPage(sessions: sessions, next: next)
        }
    }

    public struct TimelinePage: Sendable {
        /// Each entry's JSON text, as stored.
        public var entries: [[UInt8]]
        public var next: Int
        public var more: Bool
    }

    /// Entries after `seq`, oldest first, optionally of one kind.
    public func timeline(_ id: String, after seq: Int, limit: Int, kind: String?) throws(StoreError) -> TimelinePage {
        try locked { () throws(StoreError) in
            let stored = try load(id)
            let rows = try readRows { () throws(SQLiteError) in
                let statement = kind == nil ? statements.timelinePage : statements.timelinePageOfKind
                var values: [SQLiteValue] = [.integer(stored.ord), .integer(seq)]
                if let kind { values.append(.text(kind)) }
                values.append(.integer(limit + 1))
                return try statement.rows(values) { ($0.int(0), $0.blob(1)) }
            }
            let page = rows.prefix(limit)
            return TimelinePage(entries: page.map(\.1), next: page.last?.0 ?? seq, more: rows.count > limit)
        }
    }

    // MARK: Inside the lock

    private func load(_ id: String) throws(StoreError) -> StoredSession {
        guard let row = try statements.sessionRow(id: id) else { throw .sessionNotFound(id) }
        return StoredSession(session: try decode(row.state), wallOriginMs: row.wallOriginMs, ord: row.ord)
    }

    private func catchUp(_ stored: StoredSession, persist: Bool) throws(StoreError) -> StoredSession {
        var stored = stored
        let ledger = SQLiteLedger(select: statements.selectRecord, session: stored.ord)
        guard let caught = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: unixNow()), ledger: ledger) else {
            return stored
        }
        if let failure = ledger.failure { throw failure }
        guard persist, !caught.entries.isEmpty else { return stored }
        try saveRecords(caught.ledgerWrites, ord: stored.ord)
        try save(stored)
        try append(caught.entries, ord: stored.ord)
        return stored
    }

    private func save(_ stored: StoredSession) throws(StoreError) {
        let session = stored.session
        try run(statements.updateSession, [
            .text(session.uid), .integer(session.isClosed ? 1 : 0), nextDue(session), .integer(session.version),
            .blob(try encode(session)), .integer(stored.ord),
        ])
    }

    private func append(_ entries: [TimelineEntry], ord: Int64) throws(StoreError) {
        for entry in entries {
            try run(statements.insertEntry, [
                .integer(ord), .integer(entry.seq), .text(entry.kind.rawValue), .blob(Array(entry.json.serialized().utf8)),
            ])
        }
    }

    private func saveRecords(_ records: [RequestRecord], ord: Int64) throws(StoreError) {
        for record in records {
            let blob: Data
            do { blob = try encoder.encode(record) } catch { throw .corrupt("request \(record.requestId): \(error)") }
            try run(statements.upsertRecord, [.integer(ord), .text(record.requestId), .blob(Array(blob))])
        }
    }

    private func nextDue(_ session: HostSession) -> SQLiteValue {
        guard !session.isClosed, let next = session.watchdogs.first else { return .null }
        return .integer(next.dueAtMs)
    }

    private func encode(_ session: HostSession) throws(StoreError) -> [UInt8] {
        do { return Array(try encoder.encode(session)) } catch { throw .corrupt("session \(session.id): \(error)") }
    }

    private func decode(_ blob: [UInt8]) throws(StoreError) -> HostSession {
        do { return try decoder.decode(HostSession.self, from: Data(blob)) } catch { throw .corrupt("session state: \(error)") }
    }

    private func run(_ statement: Statement, _ values: [SQLiteValue]) throws(StoreError) {
        do { try statement.run(values) } catch { throw .database(error) }
    }

    private func readRows<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw .database(error) }
    }

    /// `BEGIN IMMEDIATE … COMMIT` around `body`; any error rolls everything back.
    private func writing<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        do { try database.execute("BEGIN IMMEDIATE") } catch { throw .database(error) }
        do throws(StoreError) {
            let result = try body()
            do { try database.execute("COMMIT") } catch { throw StoreError.database(error) }
            return result
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }
}

/// For catching a listed `wall` session's clock up in memory only: nothing is looked up.
private struct NoLedger: RequestLedger {
    func record(for requestId: String) -> RequestRecord? { nil }
}

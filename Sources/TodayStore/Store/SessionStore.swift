import Foundation
import TodayHost

/// Sessions, their timelines and request ledgers, over a `SessionStorage` (SQLite or
/// PostgreSQL). Every accepted input is one transaction that applies the input to the session
/// and writes the new state with all of its timeline entries and ledger records; it commits
/// before the answer is made. Concurrent inputs share transactions (`GroupCommit`); views come
/// from a cache of committed sessions.
///
/// This file is the store's front: what it holds, opening and closing. Each concern has its
/// own file beside it: `Writer.swift` (the one way in for writes, group commit) and
/// `Writer+Batch.swift` (a batch inside its transaction, appending entries), `Idempotency.swift`,
/// `CachedReads.swift` (the cache, version checks, view bytes), `Pages.swift` (timelines, lists,
/// reports), `WallTimers.swift`, `Retention.swift` (idle expiry, purges) and `Removal.swift`
/// (the reclaimer, forks in chunks), `Replicas.swift` (other servers on shared storage),
/// `Kept.swift` (replays kept as sessions).
package final class SessionStore: @unchecked Sendable {
    let storage: any SessionStorage
    let cache: SessionCache
    /// Concurrent reads' version checks, one query for all waiting (shared storage only).
    let versionChecks: VersionChecks?
    var groupCommit: GroupCommit!
    /// Deletes the rows of removed sessions in small transactions (`Removal.swift`).
    private(set) var reclaimer: BackgroundLoop?
    /// What the store counts for `/metrics`.
    package let metrics = Metrics()
    /// Whether other servers write the same sessions (PostgreSQL).
    package var isShared: Bool { storage.isShared }
    /// Whether the storage takes writes, for `/readyz`.
    package var health: StorageHealth { storage.health }
    /// Rows one reclaiming or copying transaction moves (`Removal.swift`).
    let chunkRows: Int
    private let observersLock = NSLock()
    // Guarded by `observersLock`.
    private var observers: [@Sendable ([String]) -> Void] = []
    /// Told what other servers on shared storage did (`Replicas.swift`).
    let remoteObservers = RemoteObservers()

    /// Calls `observer` with the ids of the sessions whose timeline grew (or that were purged),
    /// after each commit.
    package func observeChanges(_ observer: @escaping @Sendable ([String]) -> Void) {
        observersLock.lock()
        observers.append(observer)
        observersLock.unlock()
    }

    /// Sessions by status, for `/metrics`.
    package func sessionCounts() throws(StoreError) -> (active: Int, closed: Int) {
        var counts = (active: 0, closed: 0)
        for (closed, count) in try storage.sessionCounts() {
            if closed == 0 { counts.active = count } else { counts.closed = count }
        }
        return counts
    }

    func notifyChanged(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        for observer in currentObservers { observer(ids) }
    }

    private var currentObservers: [@Sendable ([String]) -> Void] {
        observersLock.lock()
        defer { observersLock.unlock() }
        return observers
    }

    /// Where the writer thread hands committed writes' answers and change notices (`Delivery`).
    let delivery = Delivery()

    /// The real time the store reads (`wall` sessions, idle expiry, retention) and its
    /// background jobs wait on: `SystemTime`, or a test's.
    package let time: any TimeSource
    let unixNow: @Sendable () -> Millis
    /// Whether the database's clock, not `unixNow`, says when a `wall` timer is due and where a
    /// `wall` session's clock starts: on shared storage with no clock given (servers' clocks
    /// differ; the database's is one for all, `PostgresClock`).
    let dueByDatabaseClock: Bool

    package static let systemUnixNow: @Sendable () -> Millis = { SystemTime().nowMs() }

    /// Opens (creating and migrating) the SQLite database at `path`, or `:memory:`
    /// (`SQLiteStorage`: one server per file, refused when damaged or another program's).
    /// `chunkRows`: rows per transaction when removing or forking a session (tests make it small).
    package convenience init(path: String, durability: Durability = .normal, cacheCapacity: Int = 4096,
                            chunkRows: Int = SessionStore.defaultChunkRows,
                            unixNow: (@Sendable () -> Millis)? = nil, time: (any TimeSource)? = nil) throws(StoreError) {
        self.init(storage: try SQLiteStorage(path: path, durability: durability, time: time ?? SystemTime()),
                  cacheCapacity: cacheCapacity, chunkRows: chunkRows, unixNow: unixNow, time: time)
    }

    /// Opens `database`: a PostgreSQL URI (`postgres://…` or `postgresql://…`, shared by any
    /// number of servers) or else the path of a SQLite file (or `:memory:`).
    /// `statementDeadline`: how long one PostgreSQL statement may take before the database is
    /// taken as frozen (`serve --statement-timeout-seconds`; SQLite has none).
    package static func open(_ database: String, durability: Durability = .normal, cacheCapacity: Int = 4096,
                            chunkRows: Int = SessionStore.defaultChunkRows,
                            unixNow: (@Sendable () -> Millis)? = nil, time: (any TimeSource)? = nil,
                            statementDeadline: Duration = SessionStore.defaultStatementDeadline) throws(StoreError) -> SessionStore {
        guard isPostgres(database) else {
            return try SessionStore(path: database, durability: durability, cacheCapacity: cacheCapacity, chunkRows: chunkRows,
                                    unixNow: unixNow, time: time)
        }
        return SessionStore(storage: try PostgresStorage(uri: database, statementDeadline: statementDeadline, time: time ?? SystemTime()),
                            cacheCapacity: cacheCapacity, chunkRows: chunkRows, unixNow: unixNow, time: time)
    }

    /// The PostgreSQL statement deadline when none is set (5 s).
    package static var defaultStatementDeadline: Duration { PostgresStorage.defaultStatementDeadline }

    /// Whether `database` names a PostgreSQL server rather than a SQLite file.
    package static func isPostgres(_ database: String) -> Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
    }

    /// `time`: a test's clock (`ManualTime`), which then decides everything and wakes the
    /// background jobs as it moves; `unixNow`: a test's reading of the Unix time alone (what is
    /// due, where a `wall` clock starts), the jobs waiting on this machine's time. Neither: this
    /// machine's, and the database's for `wall` timers on shared storage. `dueByDatabaseClock`
    /// overrides that choice (tests: a server whose own clock is off).
    init(storage: any SessionStorage, cacheCapacity: Int = 4096, chunkRows: Int = SessionStore.defaultChunkRows,
         unixNow: (@Sendable () -> Millis)? = nil, time: (any TimeSource)? = nil, dueByDatabaseClock: Bool? = nil) {
        self.storage = storage
        versionChecks = storage.isShared ? VersionChecks(parallel: storage.readConnections) { [storage] ids throws(StoreError) in
            try storage.versions(of: ids)
        } : nil
        self.chunkRows = max(1, chunkRows)
        cache = SessionCache(capacity: cacheCapacity)
        // A reading alone (`unixNow`, a test's pinned or shifted clock) decides what is due; the
        // background jobs still wait on this machine's time, as they did before `TimeSource`.
        let time: any TimeSource = time ?? SystemTime()
        self.time = time
        self.unixNow = unixNow ?? { time.nowMs() }
        self.dueByDatabaseClock = dueByDatabaseClock ?? (unixNow == nil && time is SystemTime && storage.isShared)
        groupCommit = GroupCommit(delivery: delivery, commit: { [weak self] batch in
            guard let self else {
                for pending in batch { pending.result = .failure(.storageUnavailable("the store is closed")) }
                return []
            }
            return commitBatch(batch)
        }, observers: { [weak self] in self?.currentObservers ?? [] })
        reclaimer = BackgroundLoop(name: "todaysim-reclaim", nextWake: { nil }, time: time) { [weak self] in
            try self?.reclaimRemovedSessions()
        }
        reclaimer?.start()
        reclaimer?.poke()
        storage.health.observe { [weak self] state, _ in
            if state == .ok { self?.reclaimer?.retryNow() }
        }
        followOtherServers()
    }

    /// Stops writing and releases the storage (a SQLite file's lock, so another server may
    /// open it). Writes after it fail; reads still answer.
    package func close() {
        reclaimer?.stop()
        groupCommit.stop()
        versionChecks?.stop()
        storage.close()
    }

    deinit {
        reclaimer?.stop()
        groupCommit.stop()
        versionChecks?.stop()
        storage.close()
    }

    /// For `/readyz`: when storage is degraded, tries one small write (at most once a second)
    /// so readiness comes back as soon as the storage takes writes again, even with no traffic.
    package func probeStorage() {
        storage.probe()
    }
}

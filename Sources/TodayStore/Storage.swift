import TodayHost

/// What `SessionStore` needs of a database, whichever it is: SQLite in one file
/// (`SQLiteStorage`) or PostgreSQL shared by several servers. Above this seam, shared by every
/// backend: the engine, the cache of committed sessions, group commit, idempotency and
/// `If-Match` decisions, change notifications. Below it: rows, and the SQL that moves them.
/// Every write goes through `write`, in one transaction per call.
protocol SessionStorage: AnyObject, Sendable {
    /// Whether other processes write the same sessions: a cached session is then used only
    /// after its stored version was confirmed.
    var isShared: Bool { get }

    /// Whether the storage takes writes (`/readyz`), and what a failed write's error means.
    var health: StorageHealth { get }

    /// How many reads may run side by side (their connections).
    var readConnections: Int { get }

    /// Runs `body` in one write transaction, committed when it returns and rolled back when it
    /// throws (nothing half-applied); after the commit, `committed` runs before any other write
    /// of this process can start (the cache is updated there). `urgent`: the group commit's
    /// writer, which long jobs let in between their chunks.
    func write<T>(urgent: Bool, _ body: (any StorageTransaction) throws(StoreError) -> T,
                  committed: (T) -> Void) throws(StoreError) -> T

    /// A long job between two chunks lets urgent writers in.
    func yieldToWriters()

    /// Stops writing; reads still answer.
    func close()

    /// For `/readyz`: a degraded storage tries one small write, so readiness returns by itself.
    func probe()

    // MARK: Reads, each consistent in itself, outside any write

    /// Session `id` as stored (hidden ones not).
    func session(id: String) throws(StoreError) -> SessionRow?
    /// The stored versions of the visible sessions among `ids`: what a cached session is
    /// checked against when the storage is shared.
    func versions(of ids: [String]) throws(StoreError) -> [String: StoredVersion]

    /// Sessions by `closed` (0 active, 1 closed), hidden ones left out.
    func sessionCounts() throws(StoreError) -> [(closed: Int, count: Int)]

    /// A page of sessions after `afterOrd`, oldest first, filtered; `limit` rows at most.
    func listSessions(afterOrd: Int64, uid: String?, label: String?, closed: Bool?, limit: Int) throws(StoreError) -> [SessionRow]

    /// Entries after `seq` of session `ord` (optionally one kind), `limit` at most, as
    /// `(seq, entry JSON)`; `nil` when `id` is no longer stored under `ord`.
    func timeline(id: String, ord: Int64, after seq: Int, kind: String?, limit: Int) throws(StoreError) -> [(seq: Int, entry: [UInt8])]?

    /// Every violation entry and request record of session `ord`; `nil` as for `timeline`.
    func reportRows(id: String, ord: Int64) throws(StoreError) -> (violations: [[UInt8]], records: [[UInt8]])?

    /// Violations across sessions after cursor `after`, oldest first: `(cursor, session id, entry)`.
    func violations(after: Int64, uid: String?, label: String?, code: String?, limit: Int) throws(StoreError) -> [(cursor: Int64, sessionId: String, entry: [UInt8])]

    /// Active sessions idle past their `ttlMs` at `nowMs` (a few hundred at most).
    func idleSessions(nowMs: Millis) throws(StoreError) -> [String]
    func nextIdleExpiry() throws(StoreError) -> Millis?
    func earliestClosedAt() throws(StoreError) -> Millis?
    /// `wall` sessions with a timer due by `nowMs`, the earliest first; `nil`: by the
    /// database's clock, read in the same statement.
    func dueWallSessions(nowMs: Millis?) throws(StoreError) -> [String]
    func nextWallDue() throws(StoreError) -> Millis?
    /// How long until the earliest pending `wall` timer is due by the database's clock (at most
    /// 0: due now); `nil` when none is pending.
    func nextWallDelay() throws(StoreError) -> Millis?
    /// The database's clock, Unix ms (SQLite: this machine's): on shared storage it decides
    /// when a `wall` timer is due, so servers whose clocks differ agree (C1).
    func databaseNowMs() throws(StoreError) -> Millis
    /// A session being removed whose rows are still there.
    func nextRemoving() throws(StoreError) -> Int64?
    /// How many rows are hidden (being removed, forked or kept): what tests look for.
    func hiddenRows() throws(StoreError) -> Int

    /// From now until `close`, calls `receive` (on a thread of the storage's) with what other
    /// servers on the same storage commit; storage one server owns has nothing to tell.
    func followOtherServers(_ receive: @escaping @Sendable (RemoteChange) -> Void)
}

/// What another server on shared storage did, as this one learns of it (issue 15, item 4).
enum RemoteChange: Sendable, Equatable {
    /// It committed changes to these sessions (or removed them).
    case sessions([String])
    /// It left `wall` session `id` with a pending timer: the next due time may have moved.
    case wallTimer(String)
    /// What others did for a while is unknown (news was lost: the listening connection was
    /// down): any session may have changed, any timer moved.
    case unknown
}

/// The writes of one transaction (`SessionStorage.write`).
protocol StorageTransaction {
    /// Session `id` as stored, hidden ones not.
    func session(id: String) throws(StoreError) -> SessionRow?
    /// Locks the rows of the visible sessions among `ids` until the transaction ends (no other
    /// writer can change them meanwhile), in one statement in id order; returns their stored
    /// versions.
    func lockSessions(ids: [String]) throws(StoreError) -> [String: StoredVersion]
    /// `lockSessions`, but a row another transaction holds is skipped (missing from the
    /// result) instead of waited for: that writer is at the session already.
    func lockSessionsSkippingLocked(ids: [String]) throws(StoreError) -> [String: StoredVersion]
    /// The database's clock (Unix ms), read the first time a transaction asks and kept for
    /// the rest of it. Ask after locking the sessions it catches up: a transaction that waited
    /// for a lock must not use a time from before it got it.
    func databaseNowMs() throws(StoreError) -> Millis
    /// Stores a new session row; returns its `ord`.
    func insertSession(_ row: NewSessionRow) throws(StoreError) -> Int64
    /// Writes session `ord`'s new state; `false` when the row is hidden or gone, or (with
    /// `expectedRevision`, see `StoredVersion`) when another writer moved it on: nothing was
    /// written then.
    func updateSession(ord: Int64, _ session: HostSession, expectedRevision: Int?, nowMs: Millis) throws(StoreError) -> Bool
    func updateUid(ord: Int64, uid: String) throws(StoreError)
    /// New timeline entries of session `ord`, a violation entry also indexed by its code.
    func insertEntries(ord: Int64, _ entries: [EncodedEntry]) throws(StoreError)
    /// The request records of session `ord` among `requestIds`, as stored, in one query (an id
    /// without a record is missing from the answer).
    func records(ord: Int64, requestIds: [String]) throws(StoreError) -> [String: [UInt8]]
    func saveRecords(ord: Int64, _ records: [RequestRecord]) throws(StoreError)

    /// The answer kept for `key` on session `ord` (keys are per session).
    func idempotency(ord: Int64, key: String) throws(StoreError) -> (fingerprint: [UInt8], answer: [UInt8])?
    func insertIdempotency(ord: Int64, key: String, fingerprint: [UInt8], answer: [UInt8], createdMs: Millis) throws(StoreError)
    func forgetIdempotency(createdBefore: Millis) throws(StoreError)

    /// Tells the other servers on shared storage, when this transaction commits (never when it
    /// rolls back), which sessions it changed and which `wall` sessions it left with a pending
    /// timer.
    func announce(changed ids: [String], wallTimers: [String]) throws(StoreError)

    /// Around one batch of steps: rolled back alone when a step is refused.
    func savepoint() throws(StoreError)
    func releaseSavepoint() throws(StoreError)
    func rollbackToSavepoint() throws(StoreError)

    // MARK: Removal and forks (Store/Removal.swift)

    /// Sessions to remove: every visible one with `label` (all with `nil`).
    func sessionsToPurge(label: String?) throws(StoreError) -> [(ord: Int64, id: String)]
    /// Sessions closed at or before `closedBeforeMs`.
    func closedSessions(closedBeforeMs: Millis) throws(StoreError) -> [(ord: Int64, id: String)]
    /// Hides session `ord` from every read and frees its id (`closed = 2`, id `removing/<ord>`).
    func hide(ord: Int64) throws(StoreError)
    /// Deletes up to `rows` timeline, violation and request rows of hidden session `ord` (and
    /// its idempotency keys), and the row itself once none is left; returns how many rows went.
    func reclaim(ord: Int64, rows: Int) throws(StoreError) -> Int
    /// `closed` of row `ord` (2: hidden), `nil` when gone.
    func status(ord: Int64) throws(StoreError) -> Int?
    func copyRecords(to copy: Int64, from source: Int64) throws(StoreError)
    /// Copies the timeline and violation rows with `seq` in `(after, upTo]`.
    func copyEntries(to copy: Int64, from source: Int64, after: Int, upTo: Int) throws(StoreError)
    /// Makes hidden copy `ord` visible as session `id`, with `session` as its state (a kept
    /// replay changed since its row was made).
    func reveal(ord: Int64, id: String, _ session: HostSession, nowMs: Millis) throws(StoreError)
}

/// A session's row: its order of creation, its wall-clock origin and its state.
struct SessionRow {
    var ord: Int64
    var wallOriginMs: Int64
    var state: [UInt8]
}

/// Which row a session id names and at which revision: a cached session is current only when
/// both match (an id purged and created again has a new `ord`). The revision is the session's
/// last timeline `seq`, which every write of the row moves on — not the contract's `version`,
/// which a fired timer leaves as it is: two replicas comparing versions both fired one timer
/// (the second failed on a duplicate timeline key, a 500).
struct StoredVersion: Equatable {
    var ord: Int64
    var revision: Int
}

/// A session row to insert; `hidden` while a fork is being copied.
struct NewSessionRow {
    var id: String
    var session: HostSession
    var wallOriginMs: Millis
    var ttlMs: Millis?
    var nowMs: Millis
    var hidden = false
}

/// A timeline entry as stored.
struct EncodedEntry {
    var seq: Int
    var kind: String
    var json: [UInt8]
    /// The code of a violation entry.
    var violation: String?
}

extension HostSession {
    /// When the next timer is due on the session's clock; `nil` when closed or none.
    var nextDueMs: Millis? {
        guard !isClosed, let next = watchdogs.first else { return nil }
        return next.dueAtMs
    }
}

import Foundation
import TodayHost

/// Sessions, their timelines and request ledgers, over a `SessionStorage` (SQLite or
/// PostgreSQL). Every accepted input is one transaction that applies the input to the session
/// and writes the new state with all of its timeline entries and ledger records; it commits
/// before the answer is made. Concurrent inputs share transactions (`GroupCommit`); views come
/// from a cache of committed sessions.
public final class SessionStore: @unchecked Sendable {
    let storage: any SessionStorage
    let cache: SessionCache
    /// Concurrent reads' version checks, one query for all waiting (shared storage only).
    private let versionChecks: VersionChecks?
    private var groupCommit: GroupCommit!
    /// Deletes the rows of removed sessions in small transactions (`SessionStore+Removal`).
    private(set) var reclaimer: BackgroundLoop?
    /// What the store counts for `/metrics`.
    public let metrics = Metrics()
    /// Whether other servers write the same sessions (PostgreSQL).
    public var isShared: Bool { storage.isShared }
    /// Whether the storage takes writes, for `/readyz`.
    public var health: StorageHealth { storage.health }
    /// Rows one reclaiming or copying transaction moves (`SessionStore+Removal`).
    let chunkRows: Int
    private let observersLock = NSLock()
    // Guarded by `observersLock`.
    private var observers: [@Sendable ([String]) -> Void] = []
    /// Told what other servers on shared storage did (`SessionStore+Replicas`).
    let remoteObservers = RemoteObservers()

    /// Calls `observer` with the ids of the sessions whose timeline grew (or that were purged),
    /// after each commit.
    public func observeChanges(_ observer: @escaping @Sendable ([String]) -> Void) {
        observersLock.lock()
        observers.append(observer)
        observersLock.unlock()
    }

    /// Inputs, fired timers and violations among committed entries.
    private func count(_ entries: [TimelineEntry]) {
        for entry in entries {
            switch entry.kind {
            case .input:
                let via = entry.data["via"]?.stringValue ?? "unknown"
                let outcome = entry.data["outcome"]?.stringValue ?? "unknown"
                metrics.increment("todaysim_inputs_total", labels: "via=\"\(via)\",outcome=\"\(outcome)\"")
            case .watchdog:
                metrics.increment("todaysim_watchdogs_fired_total", labels: "kind=\"\(entry.type)\"")
            case .violation:
                metrics.increment("todaysim_violations_total", labels: "code=\"\(entry.type)\"")
            case .bridge, .emit, .navigation, .request, .header, .pull, .overlay, .analytics, .resolution, .verdict:
                break
            }
        }
    }

    /// Sessions by status, for `/metrics`.
    public func sessionCounts() throws(StoreError) -> (active: Int, closed: Int) {
        var counts = (active: 0, closed: 0)
        for (closed, count) in try storage.sessionCounts() {
            if closed == 0 { counts.active = count } else { counts.closed = count }
        }
        return counts
    }

    func notifyChanged(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        observersLock.lock()
        let current = observers
        observersLock.unlock()
        for observer in current { observer(ids) }
    }

    let unixNow: @Sendable () -> Millis
    /// Whether the database's clock, not `unixNow`, says when a `wall` timer is due and where a
    /// `wall` session's clock starts: on shared storage with no clock given (servers' clocks
    /// differ; the database's is one for all, `PostgresClock`).
    let dueByDatabaseClock: Bool

    public static let systemUnixNow: @Sendable () -> Millis = {
        Millis((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Opens (creating and migrating) the SQLite database at `path`, or `:memory:`
    /// (`SQLiteStorage`: one server per file, refused when damaged or another program's).
    /// `chunkRows`: rows per transaction when removing or forking a session (tests make it small).
    public convenience init(path: String, durability: Durability = .normal, cacheCapacity: Int = 4096,
                            chunkRows: Int = SessionStore.defaultChunkRows,
                            unixNow: (@Sendable () -> Millis)? = nil) throws(StoreError) {
        self.init(storage: try SQLiteStorage(path: path, durability: durability), cacheCapacity: cacheCapacity,
                  chunkRows: chunkRows, unixNow: unixNow)
    }

    /// Opens `database`: a PostgreSQL URI (`postgres://…` or `postgresql://…`, shared by any
    /// number of servers) or else the path of a SQLite file (or `:memory:`).
    /// `statementDeadline`: how long one PostgreSQL statement may take before the database is
    /// taken as frozen (`serve --statement-timeout-seconds`; SQLite has none).
    public static func open(_ database: String, durability: Durability = .normal, cacheCapacity: Int = 4096,
                            chunkRows: Int = SessionStore.defaultChunkRows,
                            unixNow: (@Sendable () -> Millis)? = nil,
                            statementDeadline: Duration = SessionStore.defaultStatementDeadline) throws(StoreError) -> SessionStore {
        guard isPostgres(database) else {
            return try SessionStore(path: database, durability: durability, cacheCapacity: cacheCapacity, chunkRows: chunkRows,
                                    unixNow: unixNow)
        }
        return SessionStore(storage: try PostgresStorage(uri: database, statementDeadline: statementDeadline),
                            cacheCapacity: cacheCapacity, chunkRows: chunkRows, unixNow: unixNow)
    }

    /// The PostgreSQL statement deadline when none is set (5 s).
    public static var defaultStatementDeadline: Duration { PostgresStorage.defaultStatementDeadline }

    /// Whether `database` names a PostgreSQL server rather than a SQLite file.
    public static func isPostgres(_ database: String) -> Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
    }

    /// `unixNow`: a test's clock, which then decides everything (`nil`: this machine's, and the
    /// database's for `wall` timers on shared storage); `dueByDatabaseClock` overrides that
    /// choice (tests: a server whose own clock is off).
    init(storage: any SessionStorage, cacheCapacity: Int = 4096, chunkRows: Int = SessionStore.defaultChunkRows,
         unixNow: (@Sendable () -> Millis)? = nil, dueByDatabaseClock: Bool? = nil) {
        self.storage = storage
        versionChecks = storage.isShared ? VersionChecks(parallel: storage.readConnections) { [storage] ids throws(StoreError) in
            try storage.versions(of: ids)
        } : nil
        self.chunkRows = max(1, chunkRows)
        cache = SessionCache(capacity: cacheCapacity)
        self.unixNow = unixNow ?? Self.systemUnixNow
        self.dueByDatabaseClock = dueByDatabaseClock ?? (unixNow == nil && storage.isShared)
        groupCommit = GroupCommit { [weak self] batch in
            guard let self else {
                for pending in batch { pending.result = .failure(.storageUnavailable("the store is closed")) }
                return
            }
            commitBatch(batch)
        }
        reclaimer = BackgroundLoop(name: "todaysim-reclaim", nextWake: { nil }) { [weak self] in
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
    public func close() {
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

    /// What one write committed: the engine's answer, the session after it, and each new
    /// timeline entry's JSON exactly as stored.
    public struct Write: Sendable {
        public var applied: Applied
        public var stored: StoredSession
        public var entries: [[UInt8]]
    }

    /// About the most a batch's answer may hold (each step's entries and session view): past it
    /// the batch is refused whole before it commits. A batch of inputs that each add to the view
    /// (pending requests) once answered 48 MiB for 38,000 steps.
    public static let maximumBatchAnswerBytes = 8 << 20

    // MARK: Writes

    /// Creates a session (H1): `id` is the caller's or a new UUID.
    /// `ttlMs`: close the session (kept readable) after this long with no input.
    public func create(id: String?, config: SessionConfig, ttlMs: Millis? = nil) throws(StoreError) -> Write {
        let sessionId = id ?? UUID().uuidString.lowercased()
        let created: (HostSession, Applied)
        do throws(InputError) {
            created = try HostSession.create(id: sessionId, config: config)
        } catch {
            throw .input(error)
        }
        let write = try writing { transaction throws(StoreError) in
            guard try transaction.session(id: sessionId) == nil else { throw StoreError.sessionExists(sessionId) }
            let (session, applied) = created
            let now = unixNow()
            let origin = session.config.clock == .wall ? try wallUnixNow(transaction) : now
            let ord = try transaction.insertSession(NewSessionRow(id: sessionId, session: session, wallOriginMs: origin,
                                                                  ttlMs: ttlMs, nowMs: now))
            let stored = StoredSession(session: session, wallOriginMs: origin, ord: ord)
            let entries = try append(applied.entries, ord: stored.ord, transaction)
            return (Write(applied: applied, stored: stored, entries: entries), stored)
        }
        count(write.applied.entries)
        return write
    }

    /// Applies one input to session `id` and commits it with everything it wrote, before
    /// returning. A `wall` session first catches up with the real clock, in the same
    /// transaction. Concurrent inputs share transactions (`GroupCommit`).
    public func apply(_ input: Input, to id: String, ifVersion expectedVersion: Int? = nil) throws(StoreError) -> Write {
        try applyAll([.input(input)], to: id, ifVersion: expectedVersion)[0]
    }

    /// One step of a batch: an input, or one made from the session as it stands at that step
    /// (a script's `$ref`).
    public enum Step: Sendable {
        case input(Input)
        case resolve(@Sendable (HostSession) -> Result<Input, StepError>)
    }

    /// Applies `steps` in order in one transaction, all or nothing, and waits for the commit.
    public func applyAll(_ steps: [Step], to id: String, ifVersion expectedVersion: Int? = nil) throws(StoreError) -> [Write] {
        let done = DispatchSemaphore(value: 0)
        let outcome = WriteOutcome()
        applyAll(steps, to: id, ifVersion: expectedVersion) { result in
            outcome.result = result
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
    }

    /// An `Idempotency-Key` with what identifies its request (method, path, body) and how to
    /// render the `200` answer to store with the input.
    public struct Idempotency: Sendable {
        public let key: String
        public let fingerprint: [UInt8]
        public let render: @Sendable ([Write]) -> [UInt8]

        public init(key: String, fingerprint: [UInt8], render: @escaping @Sendable ([Write]) -> [UInt8]) {
            self.key = key
            self.fingerprint = fingerprint
            self.render = render
        }
    }

    /// What a keyed request gets: the answer stored with its input when it was applied now, or
    /// the stored answer of the first request with the same key (nothing applied again).
    public enum KeyedAnswer: Sendable {
        case applied([Write], answer: [UInt8])
        case replayed(answer: [UInt8])
    }

    /// `applyAll` for a request that carries an `Idempotency-Key`.
    public func applyAll(_ steps: [Step], to id: String, ifVersion expectedVersion: Int?, idempotency: Idempotency,
                         completion: @escaping @Sendable (Result<KeyedAnswer, StoreError>) -> Void) {
        let pending = GroupCommit.Pending(steps: steps, sessionId: id, expectedVersion: expectedVersion) { _ in }
        pending.idempotency = idempotency
        pending.completion = { [unowned pending] result in
            if let replayed = pending.replayed { return completion(.success(.replayed(answer: replayed))) }
            completion(result.map { .applied($0, answer: pending.rendered ?? []) })
        }
        groupCommit.submit(pending)
    }

    /// Forgets idempotency keys older than `windowMs`.
    public func forgetIdempotencyKeys(olderThan windowMs: Millis) throws(StoreError) {
        _ = try writing { transaction throws(StoreError) in
            try transaction.forgetIdempotency(createdBefore: unixNow() - windowMs)
            return ((), nil)
        }
    }

    /// The same, answered by calling `completion` on the writer thread after the commit.
    public func applyAll(_ steps: [Step], to id: String, ifVersion expectedVersion: Int? = nil,
                         completion: @escaping @Sendable (Result<[Write], StoreError>) -> Void) {
        groupCommit.submit(GroupCommit.Pending(steps: steps, sessionId: id, expectedVersion: expectedVersion,
                                               completion: completion))
    }

    /// The same, answered by calling `completion` on the writer thread once the input's
    /// transaction has committed (or failed). The caller's thread does not wait.
    /// With `expectedVersion` (`If-Match`) the input is refused, changing nothing, when the
    /// session is no longer at that version.
    public func apply(_ input: Input, to id: String, ifVersion expectedVersion: Int? = nil,
                      completion: @escaping @Sendable (Result<Write, StoreError>) -> Void) {
        applyAll([.input(input)], to: id, ifVersion: expectedVersion) { result in
            completion(result.map { $0[0] })
        }
    }

    /// One transaction for a batch of inputs, in arrival order. An input the session refuses
    /// writes nothing (the engine decides before any row is written), so the others stand. A
    /// failed statement or commit fails them all and leaves the cache untouched.
    private func commitBatch(_ batch: [GroupCommit.Pending]) {
        let started = DispatchTime.now().uptimeNanoseconds
        let latest: [String: StoredSession]
        do throws(StoreError) {
            latest = try storage.write(urgent: true, { transaction throws(StoreError) in
                let latest = try applyBatch(batch, transaction)
                try announce(Array(latest.values), transaction)
                return latest
            }, committed: { latest in
                for stored in latest.values { cache.put(stored) }
            })
        } catch {
            for pending in batch { pending.result = .failure(error) }
            // The commit may have happened (its answer was lost): whoever waits on these
            // sessions looks again. (Other servers heard of it; this one's own notification is
            // skipped as its own.)
            if case .outcomeUnknown = error { notifyChanged(Array(Set(batch.map(\.sessionId)))) }
            return
        }
        metrics.observe("todaysim_store_commit_seconds", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        metrics.observe("todaysim_store_commit_inputs", Double(batch.count))
        for pending in batch {
            if case let .success(writes)? = pending.result { for write in writes { count(write.applied.entries) } }
        }
        notifyChanged(Array(latest.keys))
    }

    /// Inside the batch's transaction: each input in turn; returns the sessions it changed.
    private func applyBatch(_ batch: [GroupCommit.Pending], _ transaction: any StorageTransaction) throws(StoreError) -> [String: StoredSession] {
        var latest: [String: StoredSession] = [:]
        // Shared storage: every session of the batch locked in one statement, in id order (two
        // servers' batches cannot deadlock), and the cache checked against what is stored.
        let locked = storage.isShared ? try transaction.lockSessions(ids: Array(Set(batch.map(\.sessionId)))) : nil
        for pending in batch {
            let session: StoredSession
            if let inBatch = latest[pending.sessionId] {
                session = inBatch
            } else {
                do throws(StoreError) {
                    session = try current(pending.sessionId, transaction, locked: locked)
                } catch {
                    guard case .sessionNotFound = error else { throw error }
                    pending.result = .failure(error)
                    continue
                }
            }
            if let idempotency = pending.idempotency, let row = try transaction.idempotency(ord: session.ord, key: idempotency.key) {
                if row.fingerprint == idempotency.fingerprint {
                    pending.replayed = row.answer
                    pending.result = .success([])
                } else {
                    pending.result = .failure(.idempotencyConflict(idempotency.key))
                }
                continue
            }
            if let expected = pending.expectedVersion, expected != session.session.version {
                pending.result = .failure(.versionMismatch(expected: expected, current: session.session.version))
                continue
            }
            if case let .input(input) = pending.steps.first, pending.steps.count == 1 {
                // One input: a refusal writes nothing, no savepoint needed.
                switch try applyInTransaction(input, to: session, transaction) {
                case let .success(write):
                    latest[pending.sessionId] = write.stored
                    pending.result = .success([write])
                    try remember(pending, [write], of: session, transaction)
                case let .failure(refusal):
                    pending.result = .failure(.input(refusal))
                }
                continue
            }
            try transaction.savepoint()
            switch try applySteps(pending.steps, to: session, transaction) {
            case let .success(writes):
                try transaction.releaseSavepoint()
                if let last = writes.last { latest[pending.sessionId] = last.stored }
                pending.result = .success(writes)
                try remember(pending, writes, of: session, transaction)
            case let .failure(error):
                try transaction.rollbackToSavepoint()
                try transaction.releaseSavepoint()
                pending.result = .failure(error)
            }
        }
        return latest
    }

    /// Stores a keyed request's answer in the transaction that applies it.
    private func remember(_ pending: GroupCommit.Pending, _ writes: [Write], of session: StoredSession,
                          _ transaction: any StorageTransaction) throws(StoreError) {
        guard let idempotency = pending.idempotency else { return }
        let answer = idempotency.render(writes)
        pending.rendered = answer
        try transaction.insertIdempotency(ord: session.ord, key: idempotency.key, fingerprint: idempotency.fingerprint, answer: answer,
                                          createdMs: unixNow())
    }

    /// A batch: each step sees the session as the previous one left it; the first refused step
    /// ends it (the caller rolls its savepoint back), and so does an answer past
    /// `maximumBatchAnswerBytes`.
    private func applySteps(_ steps: [Step], to current: StoredSession, _ transaction: any StorageTransaction) throws(StoreError) -> Result<[Write], StoreError> {
        var session = current
        var writes: [Write] = []
        var answerBytes = 0
        var viewSize = 0
        for (index, step) in steps.enumerated() {
            let input: Input
            switch step {
            case let .input(given): input = given
            case let .resolve(make):
                switch make(session.session) {
                case let .success(made): input = made
                case let .failure(error): return .failure(.badStep(index: index, error))
                }
            }
            // The session row is written once, after the last step: a batch's steps commit
            // together, so the states between them are never read from disk.
            switch try applyInTransaction(input, to: session, transaction, saving: index == steps.count - 1, over: current) {
            case let .success(write):
                // The view's size is measured every 32nd step and the last, not per step (that
                // would hold the writer for a view encoding per step); in between it is taken to
                // grow by all a step wrote (a step's input is on its timeline entries, and the
                // view holds no more of it), so the sum never falls short.
                let entryBytes = write.entries.reduce(0) { $0 + $1.count }
                if index % 32 == 0 || index == steps.count - 1 {
                    viewSize = write.stored.viewBytes.count
                } else {
                    viewSize += entryBytes
                }
                answerBytes += viewSize + entryBytes
                guard answerBytes <= Self.maximumBatchAnswerBytes else {
                    return .failure(.badStep(index: index, StepError(
                        code: "invalid_field", status: 400,
                        detail: "the batch's answer would pass \(Self.maximumBatchAnswerBytes >> 20) MiB (each step's result carries the session view); send fewer steps per batch",
                        field: "steps")))
                }
                writes.append(write)
                session = write.stored
            case let .failure(refusal):
                return .failure(.badStep(index: index, StepError(refusal)))
            }
        }
        return .success(writes)
    }

    /// Runs the engine in memory (a `wall` session first catches up), then — only when the
    /// input is accepted — writes its rows. A refusal is returned, with nothing written.
    /// `saving`: write the new state (a batch writes once, after its last step) over
    /// `storedBefore`, the session as its row holds it (by default `current`).
    private func applyInTransaction(_ input: Input, to current: StoredSession, _ transaction: any StorageTransaction,
                                    saving: Bool = true, over storedBefore: StoredSession? = nil) throws(StoreError) -> Result<Write, InputError> {
        var stored = current
        var ledger = LayeredLedger(base: StoredLedger(transaction, session: stored.ord))
        var entries: [TimelineEntry] = []
        var caughtRecords: [RequestRecord] = []
        if stored.isWall, let caught = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: try wallUnixNow(transaction)),
                                                              ledger: ledger) {
            entries = caught.entries
            caughtRecords = caught.ledgerWrites
            ledger.overlay(caughtRecords)
        }
        var applied: Applied
        do throws(InputError) {
            applied = try stored.session.apply(input, ledger: ledger)
        } catch {
            if let failure = ledger.base.failure { throw failure }
            return .failure(error)
        }
        if let failure = ledger.base.failure { throw failure }
        try transaction.saveRecords(ord: stored.ord, caughtRecords + applied.ledgerWrites)
        if stored.session.uid != current.session.uid {
            try transaction.updateUid(ord: stored.ord, uid: stored.session.uid)
        }
        if saving { try save(stored, from: storedBefore ?? current, transaction) }
        applied.entries = entries + applied.entries
        let bytes = try append(applied.entries, ord: stored.ord, transaction)
        return .success(Write(applied: applied, stored: stored, entries: bytes))
    }

    /// Fires the timers of every `wall` session that fell due by now (C1), each session in its
    /// own transaction. Returns the ids of the sessions that changed.
    @discardableResult
    public func fireDueWallTimers() throws(StoreError) -> [String] {
        var fired: [String] = []
        for id in try storage.dueWallSessions(nowMs: dueByDatabaseClock ? nil : unixNow()) {
            do throws(StoreError) {
                _ = try catchUp(id, skippingLocked: true)
                fired.append(id)
            } catch {
                // Removed since it was found due, or being written by another server (which
                // catches it up; if not far enough, it is still due and found again next
                // time): nothing to fire here, the others still are.
                guard case .sessionNotFound = error else { throw error }
            }
        }
        return fired
    }

    /// When, on this machine's clock, the earliest pending timer among `wall` sessions is due:
    /// by the database's clock, the delay it reports from now (this machine's clock may be
    /// off); otherwise the due time read as a Unix time (a test's clock's too).
    public func nextWallDueDate() throws(StoreError) -> Date? {
        guard dueByDatabaseClock else { return try storage.nextWallDue().map { Date(timeIntervalSince1970: Double($0) / 1000) } }
        return try storage.nextWallDelay().map { Date(timeIntervalSinceNow: Double($0) / 1000) }
    }

    // MARK: Reads

    /// The session `id`; a `wall` session caught up with the real clock first.
    public func session(_ id: String) throws(StoreError) -> StoredSession {
        if let stored = cache.stored(id), !stored.isWall, try isCurrent(stored) { return stored }
        if storage.isShared {
            // Another server may have written it: read the row (a `wall` one is caught up below).
            guard let row = try storage.session(id: id) else {
                cache.remove([id])
                throw .sessionNotFound(id)
            }
            let stored = try StoredSession(row: row)
            if !stored.isWall {
                cache.put(stored)
                return stored
            }
        }
        return try catchUp(id)
    }

    /// Whether a cached session is what is stored: always on storage this server alone
    /// writes; on shared storage after an indexed lookup of its version (concurrent reads
    /// share one).
    private func isCurrent(_ stored: StoredSession) throws(StoreError) -> Bool {
        guard let versionChecks else { return true }
        return try versionChecks.version(of: stored.id) == stored.version
    }

    /// The view's bytes and a tag that changes whenever anything in the view but a `wall`
    /// session's clock changes (every such change is an input or a fired timer, so it moves
    /// `version` or the timeline). Both from one read of the session: a write between two
    /// reads could otherwise pair old bytes with the new tag.
    public func taggedView(_ id: String) throws(StoreError) -> (bytes: [UInt8], tag: String) {
        let (bytes, stored) = try viewAndSession(id)
        return (bytes, Self.tag(stored))
    }

    /// What `taggedView` tags a view with.
    private static func tag(_ stored: StoredSession) -> String {
        "\(stored.session.version)-\(stored.session.lastSeq)"
    }

    /// On shared storage, `taggedView` of a cached session without holding the caller's thread
    /// while its version is confirmed: `answer` gets the view, or `nil` when the cache cannot
    /// answer (not cached, a `wall` session, or stale: ask `taggedView`). `false`: nothing was
    /// started (storage this server alone writes answers `taggedView` at once).
    public func cachedTaggedView(_ id: String,
                                 answer: @escaping @Sendable (Result<(bytes: [UInt8], tag: String)?, StoreError>) -> Void) -> Bool {
        guard let versionChecks else { return false }
        guard let (_, stored) = cache.view(id), !stored.isWall else {
            answer(.success(nil))
            return true
        }
        // The cache, not the store: a pending check must not be what keeps the store alive (its
        // deinit would then run on the check's own thread and wait for that thread to end).
        versionChecks.version(of: id) { [cache] result in
            answer(result.map { version in
                guard version == stored.version, let (view, cached) = cache.view(id), cached.version == stored.version else { return nil }
                let bytes = view ?? cached.viewBytes
                if view == nil { cache.remember(view: bytes, of: id, version: cached.version) }
                return (bytes, Self.tag(cached))
            })
        }
        return true
    }

    /// The session view's JSON bytes, from the cache when the session has not changed.
    public func viewBytes(_ id: String) throws(StoreError) -> [UInt8] {
        try viewAndSession(id).bytes
    }

    private func viewAndSession(_ id: String) throws(StoreError) -> (bytes: [UInt8], stored: StoredSession) {
        if let (view, stored) = cache.view(id), !stored.isWall, try isCurrent(stored) {
            if let view { return (view, stored) }
            let bytes = stored.viewBytes
            cache.remember(view: bytes, of: id, version: stored.version)
            return (bytes, stored)
        }
        let stored = try session(id)
        let bytes = stored.viewBytes
        if !stored.isWall { cache.remember(view: bytes, of: id, version: stored.version) }
        return (bytes, stored)
    }

    /// The view after a write, encoded once and kept for the reads that follow.
    public func viewBytes(after write: Write) -> [UInt8] {
        let bytes = write.stored.viewBytes
        if !write.stored.isWall { cache.remember(view: bytes, of: write.stored.id, version: write.stored.version) }
        return bytes
    }

    public struct SessionPage: Sendable {
        public var sessions: [StoredSession]
        /// The cursor of the next page; `nil` at the end.
        public var next: String?
    }

    /// Sessions oldest first, filtered by `uid`, `label` and closed-ness.
    public func list(uid: String?, label: String?, closed: Bool?, limit: Int, after cursor: String?) throws(StoreError) -> SessionPage {
        let afterOrd = cursor.flatMap { Int64($0) } ?? 0
        let rows = try storage.listSessions(afterOrd: afterOrd, uid: uid, label: label, closed: closed, limit: limit + 1)
        var sessions: [StoredSession] = []
        var wallNow: Millis?
        for row in rows.prefix(limit) {
            var stored = try StoredSession(row: row)
            if let cached = cache.stored(stored.id), cached.ord == stored.ord, cached.session.lastSeq >= stored.session.lastSeq {
                stored = cached
            }
            if stored.isWall {
                // Read once, and only for a page with a `wall` session (a round trip on shared storage).
                if wallNow == nil { wallNow = dueByDatabaseClock ? try storage.databaseNowMs() : unixNow() }
                _ = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: wallNow ?? 0), ledger: NoLedger())
            }
            sessions.append(stored)
        }
        let next = rows.count > limit ? sessions.last.map { String($0.ord) } : nil
        return SessionPage(sessions: sessions, next: next)
    }

    public struct TimelinePage: Sendable {
        /// Each entry's JSON text, as stored.
        public var entries: [[UInt8]]
        public var next: Int
        public var more: Bool
        /// The session's last `seq` when the page was read (its `ETag`).
        public var lastSeq: Int
        /// The session's row (`StoredSession.ord`) the entries are of.
        public var ord: Int64
    }

    /// Entries after `seq`, oldest first, optionally of one kind.
    public func timeline(_ id: String, after seq: Int, limit: Int, kind: String?) throws(StoreError) -> TimelinePage {
        let stored = try session(id)
        guard let rows = try storage.timeline(id: id, ord: stored.ord, after: seq, kind: kind, limit: limit + 1) else {
            throw .sessionNotFound(id)
        }
        let page = rows.prefix(limit)
        return TimelinePage(entries: page.map(\.1), next: page.last?.0 ?? seq, more: rows.count > limit,
                            lastSeq: stored.session.lastSeq, ord: stored.ord)
    }

    /// The session's verdict (M1–M9): its violations and how each native request ended.
    public func report(_ id: String) throws(StoreError) -> SessionReport {
        let ord = try session(id).ord
        guard let (violations, blobs) = try storage.reportRows(id: id, ord: ord) else { throw .sessionNotFound(id) }
        var records: [RequestRecord] = []
        for blob in blobs {
            do { records.append(try RequestRecord(stateBytes: blob)) } catch { throw .corrupt("request record: \(error)") }
        }
        var entries: [JSON] = []
        for bytes in violations {
            do { entries.append(try JSON.parse(bytes: bytes)) } catch { throw .corrupt("timeline entry: \(error)") }
        }
        return SessionReport(sessionId: id, violations: entries, records: records)
    }

    public struct ViolationPage: Sendable {
        /// Each violation's session id and its timeline entry's JSON as stored.
        public var violations: [(sessionId: String, entry: [UInt8])]
        public var next: String?
    }

    /// Violations across sessions, newest last, filtered by the sessions' `uid` and by `code`.
    public func violations(uid: String?, label: String? = nil, code: String?, limit: Int,
                           after cursor: String?) throws(StoreError) -> ViolationPage {
        let after = cursor.flatMap { Int64($0) } ?? 0
        let rows = try storage.violations(after: after, uid: uid, label: label, code: code, limit: limit + 1)
        let page = rows.prefix(limit)
        return ViolationPage(violations: page.map { ($0.sessionId, $0.entry) },
                             next: rows.count > limit ? page.last.map { String($0.cursor) } : nil)
    }

    /// Closes (tears down, kept readable) every session idle past its `ttlMs`; returns their ids.
    @discardableResult
    public func closeIdleSessions() throws(StoreError) -> [String] {
        let idle = try storage.idleSessions(nowMs: unixNow())
        var closed: [String] = []
        for id in idle {
            do throws(StoreError) {
                _ = try apply(.teardown, to: id)
                closed.append(id)
            } catch {
                switch error {
                case .input(.sessionClosed), .sessionNotFound: continue  // closed or purged meanwhile
                default: throw error
                }
            }
        }
        return closed
    }

    /// Unix time (ms) when the next idle session expires.
    public func nextIdleExpiryUnixMs() throws(StoreError) -> Millis? {
        try storage.nextIdleExpiry()
    }

    /// Unix time (ms) when the longest-closed session was closed.
    public func earliestClosedAtUnixMs() throws(StoreError) -> Millis? {
        try storage.earliestClosedAt()
    }

    /// Purges sessions closed for longer than `retentionMs`; returns how many.
    @discardableResult
    public func purgeClosed(olderThan retentionMs: Millis) throws(StoreError) -> Int {
        try purgeSessions { transaction throws(StoreError) in
            try transaction.closedSessions(closedBeforeMs: unixNow() - retentionMs)
        }
    }

    /// Ends and deletes every session with `label` (or, with `nil`, every session): rows,
    /// timelines, ledgers and violations. Returns how many were deleted.
    public func purge(label: String?) throws(StoreError) -> Int {
        try purgeSessions { transaction throws(StoreError) in try transaction.sessionsToPurge(label: label) }
    }

    /// Ends and deletes session `id`, as `purge(label:)` does; `false` when there is none. With
    /// `label` (a label-bound token's), only a session of that label: checked in the purge's own
    /// transaction, so an id purged and created under another label meanwhile is not removed.
    public func purge(id: String, label: String? = nil) throws(StoreError) -> Bool {
        try purgeSessions { transaction throws(StoreError) in
            guard let row = try transaction.session(id: id) else { return [] }
            if let label, try StoredSession.decode(row.state).config.label != label { return [] }
            return [(ord: row.ord, id: id)]
        } == 1
    }

    /// Removes the sessions `select` finds (`(ord, id)` rows, read in the same transaction):
    /// one short transaction hides them all (their ids free at once, gone from every read),
    /// then the reclaimer deletes their rows in small transactions, so removing a session with
    /// a long timeline never holds the writer for long. Returns how many.
    private func purgeSessions(_ select: (any StorageTransaction) throws(StoreError) -> [(ord: Int64, id: String)]) throws(StoreError) -> Int {
        let doomed = try writing { transaction throws(StoreError) in
            let doomed = try select(transaction)
            for (ord, _) in doomed { try transaction.hide(ord: ord) }
            try transaction.announce(changed: doomed.map(\.id), wallTimers: [])
            // Before the commit ends the write: no later write may find a removed session in
            // the cache.
            cache.remove(doomed.map(\.id))
            return (doomed, nil)
        }
        notifyChanged(doomed.map(\.id))
        reclaimer?.poke()
        return doomed.count
    }

    // MARK: Inside a write

    /// Tests: makes the next `count` commits fail as on a full disk (SQLite).
    func failNextCommit(count: Int = 1) {
        (storage as? SQLiteStorage)?.failNextCommit(count: count)
    }

    /// Tests: how many injected failures are still to come.
    var failingCommitsForTesting: Int { (storage as? SQLiteStorage)?.injectedFailuresLeft ?? 0 }

    /// Tests: the session as its row holds it, bypassing the cache.
    func reloadFromDisk(_ id: String) throws(StoreError) -> StoredSession {
        try storage.write(urgent: false, { transaction throws(StoreError) in
            guard let row = try transaction.session(id: id) else { throw StoreError.sessionNotFound(id) }
            return try StoredSession(row: row)
        }, committed: { _ in })
    }

    /// The committed session, for a write: cached, or loaded from its row. On shared storage its
    /// row is locked first (`locked`: the batch's locks, already taken) and the cached session
    /// used only at the stored version.
    /// `skippingLocked`: a row another server holds locked counts as not found.
    func current(_ id: String, _ transaction: any StorageTransaction,
                 locked: [String: StoredVersion]? = nil, skippingLocked: Bool = false) throws(StoreError) -> StoredSession {
        if storage.isShared {
            let versions: [String: StoredVersion]
            if let locked {
                versions = locked
            } else if skippingLocked {
                versions = try transaction.lockSessionsSkippingLocked(ids: [id])
            } else {
                versions = try transaction.lockSessions(ids: [id])
            }
            guard let version = versions[id] else {
                cache.remove([id])
                throw .sessionNotFound(id)
            }
            // A `wall` session's timers fire without moving its version (C1: not an input), so
            // a cached one may lack what another server fired: its row, locked now, is read.
            if let stored = cache.stored(id), stored.version == version, !stored.isWall { return stored }
        } else if let stored = cache.stored(id) {
            return stored
        }
        guard let row = try transaction.session(id: id) else { throw .sessionNotFound(id) }
        let stored = try StoredSession(row: row)
        cache.put(stored)
        return stored
    }

    /// A `wall` session brought to the real clock; what fired is committed. `skippingLocked`
    /// (the scheduler): a session another server is writing is `sessionNotFound`, not waited for.
    private func catchUp(_ id: String, skippingLocked: Bool = false) throws(StoreError) -> StoredSession {
        let (stored, fired) = try writing { transaction throws(StoreError) in
            let current = try current(id, transaction, skippingLocked: skippingLocked)
            var stored = current
            guard stored.isWall else { return ((stored, [TimelineEntry]()), nil) }
            let ledger = StoredLedger(transaction, session: stored.ord)
            guard let caught = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: try wallUnixNow(transaction)), ledger: ledger),
                  !caught.entries.isEmpty
            else { return ((stored, []), nil) }
            if let failure = ledger.failure { throw failure }
            try transaction.saveRecords(ord: stored.ord, caught.ledgerWrites)
            try save(stored, from: current, transaction)
            _ = try append(caught.entries, ord: stored.ord, transaction)
            return ((stored, caught.entries), stored)
        }
        count(fired)
        return stored
    }

    /// The Unix time a `wall` session catches up to in `transaction`, asked once its rows are
    /// locked (`StorageTransaction.databaseNowMs`).
    private func wallUnixNow(_ transaction: any StorageTransaction) throws(StoreError) -> Millis {
        dueByDatabaseClock ? try transaction.databaseNowMs() : unixNow()
    }

    /// Writes the session's new state over `previous`.
    private func save(_ stored: StoredSession, from previous: StoredSession, _ transaction: any StorageTransaction) throws(StoreError) {
        let written = try transaction.updateSession(ord: stored.ord, stored.session, expectedRevision: previous.session.lastSeq,
                                                   nowMs: unixNow())
        // A removed session's row is hidden (or gone): an input must never bring it back.
        guard written else { throw .sessionNotFound(stored.session.id) }
    }

    /// Stores the entries; returns each one's JSON as stored, for the answer.
    private func append(_ entries: [TimelineEntry], ord: Int64, _ transaction: any StorageTransaction) throws(StoreError) -> [[UInt8]] {
        let encoded = entries.map(EncodedEntry.init)
        try transaction.insertEntries(ord: ord, encoded)
        return encoded.map(\.json)
    }

    /// One write transaction around `body`, which returns its result and the session to cache
    /// once committed. Any error rolls everything back and leaves the cache as it was.
    func writing<T>(_ body: (any StorageTransaction) throws(StoreError) -> (T, StoredSession?)) throws(StoreError) -> T {
        let (result, changed) = try storage.write(urgent: false, { transaction throws(StoreError) in
            let written = try body(transaction)
            if let changed = written.1 { try announce([changed], transaction) }
            return written
        }, committed: { (_, changed) in
            if let changed { cache.put(changed) }
        })
        if let changed { notifyChanged([changed.id]) }
        return result
    }

    /// For `/readyz`: when storage is degraded, tries one small write (at most once a second)
    /// so readiness comes back as soon as the storage takes writes again, even with no traffic.
    public func probeStorage() {
        storage.probe()
    }
}

/// For catching a listed `wall` session's clock up in memory only: nothing is looked up.
private struct NoLedger: RequestLedger {
    func record(for requestId: String) -> RequestRecord? { nil }
}

/// Carries one write's result from the writer thread to a caller that waits for it.
private final class WriteOutcome: @unchecked Sendable {
    var result: Result<[SessionStore.Write], StoreError>?
}

extension StepError {
    /// The engine's refusals, in the contract's codes.
    init(_ error: InputError) {
        switch error {
        case let .invalidField(field, detail):
            self.init(code: "invalid_field", status: 400, detail: "\(field): \(detail)", field: field)
        case .sessionClosed:
            self.init(code: "session_closed", status: 409, detail: "the session is closed")
        case .clockNotVirtual:
            self.init(code: "clock_not_virtual", status: 409, detail: "this session runs on the wall clock")
        }
    }
}

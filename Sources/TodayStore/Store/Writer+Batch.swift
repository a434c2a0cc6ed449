import Foundation
import TodayHost

/// Inside a write's transaction: a batch of inputs applied in turn, the session each starts
/// from, its new state written and its timeline entries appended.
extension SessionStore {
    /// Inside the batch's transaction: each input in turn; returns each changed session's last write.
    func applyBatch(_ batch: [GroupCommit.Pending], _ transaction: any StorageTransaction) throws(StoreError) -> [String: Write] {
        var latest: [String: Write] = [:]
        // Shared storage: every session of the batch locked in one statement, in id order (two
        // servers' batches cannot deadlock), and the cache checked against what is stored.
        let locked = storage.isShared ? try transaction.lockSessions(ids: Array(Set(batch.map(\.sessionId)))) : nil
        for pending in batch {
            let session: StoredSession
            if let inBatch = latest[pending.sessionId] {
                session = inBatch.stored
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
            if !pending.asBatch, case let .input(input) = pending.steps.first, pending.steps.count == 1 {
                // One input: a refusal writes nothing, no savepoint needed.
                switch try applyInTransaction(input, to: session, transaction) {
                case let .success(write):
                    latest[pending.sessionId] = write
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
                if let last = writes.last { latest[pending.sessionId] = last }
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

    /// A batch: each step sees the session as the previous one left it; the first refused step
    /// ends it (the caller rolls its savepoint back), and so does an answer past
    /// `maximumBatchAnswerBytes`.
    func applySteps(_ steps: [Step], to current: StoredSession, _ transaction: any StorageTransaction) throws(StoreError) -> Result<[Write], StoreError> {
        var session = current
        var writes: [Write] = []
        var answerBytes = 0
        var viewSize = 0
        for (index, step) in steps.enumerated() {
            let input: Input
            switch step {
            case let .input(given): input = given
            case let .refused(problem): return .failure(.badStep(index: index, .unresolved(problem)))
            case let .reference(channel, body):
                switch StepReferences.input(channel: channel, body: body, view: session.session.view) {
                case let .success(made): input = made
                case let .failure(problem): return .failure(.badStep(index: index, .unresolved(problem)))
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
                    return .failure(.badStep(index: index, .answerTooLarge(limitBytes: Self.maximumBatchAnswerBytes)))
                }
                writes.append(write)
                session = write.stored
            case let .failure(refusal):
                return .failure(.badStep(index: index, .refused(refusal)))
            }
        }
        return .success(writes)
    }

    /// Runs the engine in memory (a `wall` session first catches up), then — only when the
    /// input is accepted — writes its rows. A refusal is returned, with nothing written.
    /// `saving`: write the new state (a batch writes once, after its last step) over
    /// `storedBefore`, the session as its row holds it (by default `current`).
    func applyInTransaction(_ input: Input, to current: StoredSession, _ transaction: any StorageTransaction,
                                    saving: Bool = true, over storedBefore: StoredSession? = nil) throws(StoreError) -> Result<Write, InputError> {
        var stored = current
        var given = current.knownLedger ?? LedgerRecords()
        var entries: [TimelineEntry] = []
        var caughtRecords: [RequestRecord] = []
        if stored.isWall, let caught = try catchUp(&stored.session, toWallClock: stored.wallNowMs(unixNowMs: try wallUnixNow(transaction)),
                                                   given: &given, ord: stored.ord, transaction) {
            entries = caught.entries
            caughtRecords = caught.ledgerWrites
            given.overlay(caughtRecords)
        }
        var applied: Applied
        switch try apply(input, to: &stored.session, given: &given, ord: stored.ord, transaction) {
        case let .success(done): applied = done
        case let .failure(refusal): return .failure(refusal)
        }
        try transaction.saveRecords(ord: stored.ord, caughtRecords + applied.ledgerWrites)
        stored.knownLedger = given
        if stored.session.uid != current.session.uid {
            try transaction.updateUid(ord: stored.ord, uid: stored.session.uid)
        }
        if saving { try save(stored, from: storedBefore ?? current, transaction) }
        applied.entries = entries + applied.entries
        let bytes = try append(applied.entries, ord: stored.ord, transaction)
        return .success(Write(applied: applied, stored: stored, entries: bytes))
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

    /// The Unix time a `wall` session catches up to in `transaction`, asked once its rows are
    /// locked (`StorageTransaction.databaseNowMs`).
    func wallUnixNow(_ transaction: any StorageTransaction) throws(StoreError) -> Millis {
        dueByDatabaseClock ? try transaction.databaseNowMs() : unixNow()
    }

    /// Writes the session's new state over `previous`.
    func save(_ stored: StoredSession, from previous: StoredSession, _ transaction: any StorageTransaction) throws(StoreError) {
        let written = try transaction.updateSession(ord: stored.ord, stored.session, expectedRevision: previous.session.lastSeq,
                                                   nowMs: unixNow())
        // A removed session's row is hidden (or gone): an input must never bring it back.
        guard written else { throw .sessionNotFound(stored.session.id) }
    }

    /// Stores the entries; returns each one's JSON as stored, for the answer.
    func append(_ entries: [TimelineEntry], ord: Int64, _ transaction: any StorageTransaction) throws(StoreError) -> [[UInt8]] {
        let encoded = entries.map(EncodedEntry.init)
        try transaction.insertEntries(ord: ord, encoded)
        return encoded.map(\.json)
    }
}

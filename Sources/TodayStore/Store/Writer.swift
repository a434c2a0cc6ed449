import Foundation
import TodayHost

/// The one way in for writes: an input, a batch or a creation goes to the group commit, which
/// applies each in arrival order inside one transaction and answers once it has committed.
extension SessionStore {
    /// What one write committed: the engine's answer, the session after it, and each new
    /// timeline entry's JSON exactly as stored.
    package struct Write: Sendable {
        package var applied: Applied
        package var stored: StoredSession
        package var entries: [[UInt8]]
        let encodedView = EncodedView()

        /// The session view after this write, encoded at most once, by whoever needs it first
        /// (the answer, made in the transaction under an `Idempotency-Key` or after it, or a
        /// read): the store caches this write's view as it commits. Reading it never calls the
        /// store.
        package var viewBytes: [UInt8] { encodedView.bytes(of: stored) }
    }

    /// About the most a batch's answer may hold (each step's entries and session view): past it
    /// the batch is refused whole before it commits. A batch of inputs that each add to the view
    /// (pending requests) once answered 48 MiB for 38,000 steps.
    package static let maximumBatchAnswerBytes = 8 << 20


    /// Creates a session (H1): `id` is the caller's or a new UUID.
    /// `ttlMs`: close the session (kept readable) after this long with no input.
    package func create(id: String?, config: SessionConfig, ttlMs: Millis? = nil) throws(StoreError) -> Write {
        let sessionId = id ?? UUID().uuidString.lowercased()
        let created: (HostSession, Applied)
        do throws(InputError) {
            created = try HostSession.create(id: sessionId, config: config)
        } catch {
            throw .input(error)
        }
        let write: Write = try writing { transaction throws(StoreError) in
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
        // Its view, encoded once by the answer or the first read.
        cache.put(write.stored, view: write.encodedView)
        count(write.applied.entries)
        return write
    }

    /// One step of a batch, as data: an input; a body that reads the session as it stands at
    /// that step (`{"$ref": "document.requestId"}` anywhere in it: resolved against the view when
    /// the step runs, then decoded as the body of `channel`, a `/steps` key); or a body that did
    /// not decode, refused in its turn (an earlier step's refusal comes first).
    package enum Step: Sendable {
        case input(Input)
        case reference(channel: String, body: JSON)
        case refused(InputProblem)
    }

    /// What an accepted batch got.
    package enum Submitted: Sendable {
        /// Applied now: what each step wrote, and, under an `Idempotency-Key`, the answer stored
        /// with them.
        case applied([Write], answer: [UInt8]?)
        /// The `Idempotency-Key` was used before for the same request: its stored answer;
        /// nothing was applied again.
        case replayed(answer: [UInt8])
    }

    /// The one way in for inputs: applies `steps` in order to session `id` in one
    /// transaction, all or nothing (a batch of one is a single input), and calls `completion`
    /// on the writer thread once that transaction has committed (or failed); the caller's
    /// thread does not wait. A `wall` session first catches up with the real clock, in the same
    /// transaction. Concurrent inputs share transactions (`GroupCommit`). With
    /// `expectedVersion` (`If-Match`) the steps are refused, changing nothing, when the session
    /// is no longer at that version; with `idempotency` the answer is stored with them, or the
    /// stored one is given back (`Idempotency.swift`).
    /// `asBatch`: one step is a batch too (its refusal is `badStep` 0, as `/steps` answers it),
    /// not a single input.
    package func apply(steps: [Step], to id: String, ifVersion expectedVersion: Int? = nil, idempotency: Idempotency? = nil,
                      asBatch: Bool = false, completion: @escaping @Sendable (Result<Submitted, StoreError>) -> Void) {
        let pending = GroupCommit.Pending(steps: steps, sessionId: id, expectedVersion: expectedVersion, asBatch: asBatch) { _ in }
        pending.idempotency = idempotency
        pending.completion = { [unowned pending] result in
            if let replayed = pending.replayed { return completion(.success(.replayed(answer: replayed))) }
            completion(result.map { .applied($0, answer: pending.rendered) })
        }
        groupCommit.submit(pending)
    }

    /// `apply(steps:…)` waited for, with no `Idempotency-Key`: the store's own idle expiry,
    /// tests and tools.
    func applyWaiting(_ steps: [Step], to id: String, ifVersion expectedVersion: Int? = nil) throws(StoreError) -> [Write] {
        let done = DispatchSemaphore(value: 0)
        let outcome = WriteOutcome()
        apply(steps: steps, to: id, ifVersion: expectedVersion) { result in
            outcome.result = result.map { submitted in
                guard case let .applied(writes, _) = submitted else { return [] }
                return writes
            }
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
    }

    /// One transaction for a batch of inputs, in arrival order. An input the session refuses
    /// writes nothing (the engine decides before any row is written), so the others stand. A
    /// failed statement or commit fails them all and leaves the cache untouched. Returns the
    /// sessions whose waiters are told (`notifyChanged`), with the answers.
    func commitBatch(_ batch: [GroupCommit.Pending]) -> [String] {
        let took = Stopwatch()
        let latest: [String: Write]
        do throws(StoreError) {
            latest = try storage.write(urgent: true, { transaction throws(StoreError) in
                let latest = try applyBatch(batch, transaction)
                try announce(latest.values.map(\.stored), transaction)
                return latest
            }, committed: { latest in
                // Each session's last write, with its view: encoded once, by its answer (in the
                // transaction under an `Idempotency-Key`, else after it) or by the first read.
                for write in latest.values { cache.put(write.stored, view: write.encodedView) }
            })
        } catch {
            for pending in batch { pending.result = .failure(error) }
            // The commit may have happened (its answer was lost): whoever waits on these
            // sessions looks again. (Other servers heard of it; this one's own notification is
            // skipped as its own.)
            if case .outcomeUnknown = error { return Array(Set(batch.map(\.sessionId))) }
            return []
        }
        metrics.observe("todaysim_store_commit_seconds", Double(took.elapsedNs) / 1e9)
        metrics.observe("todaysim_store_commit_inputs", Double(batch.count))
        for pending in batch {
            if case let .success(writes)? = pending.result { for write in writes { count(write.applied.entries) } }
        }
        return Array(latest.keys)
    }

    /// Inputs, fired timers and violations among committed entries.
    func count(_ entries: [TimelineEntry]) {
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
}

/// A write's view, encoded once.
final class EncodedView: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var encoded: [UInt8]?

    func bytes(of stored: StoredSession) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        if let encoded { return encoded }
        let bytes = stored.viewBytes
        encoded = bytes
        return bytes
    }

}

/// Carries one write's result from the writer thread to a caller that waits for it.
final class WriteOutcome: @unchecked Sendable {
    var result: Result<[SessionStore.Write], StoreError>?
}


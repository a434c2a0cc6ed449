import Foundation
import TodayHost

/// Long writes in short transactions (issue 12, item 10): removing or forking a session with
/// a long timeline once held the writer for 0.5–0.9 s, stalling every other client's inputs.
/// A row with `closed = 2` is being removed or being copied: hidden from every read, its id
/// renamed (`removing/…`, `forking/…`, never a valid session id), its rows moved a chunk per
/// transaction. A restart finishes what a crash interrupted: removals go on, half-made forks
/// are removed.
extension SessionStore {
    /// Rows one reclaiming or copying transaction moves, unless the store was opened with
    /// another `chunkRows`.
    package static let defaultChunkRows = 2000

    /// The reclaimer's work: deletes the rows of sessions being removed, one chunk per
    /// transaction, until none is left.
    func reclaimRemovedSessions() throws(StoreError) {
        // Looked up without a write transaction: with nothing to remove, no commit is made.
        while let ord = try storage.nextRemoving() {
            try writing { transaction throws(StoreError) in
                _ = try transaction.reclaim(ord: ord, rows: chunkRows)
                return ((), nil)
            }
            storage.yieldToWriters()
        }
    }

    /// A copy of session `id` at its current state under `newId` (or a new UUID): its row,
    /// timeline, ledger and violations, so a suite can branch one scenario several ways. The
    /// copy is made hidden, its timeline copied a chunk per transaction (up to the source's
    /// `seq` when the fork began), and revealed under its id at the end.
    package func fork(_ id: String, as newId: String?) throws(StoreError) -> StoredSession {
        let forkId = newId ?? UUID().uuidString.lowercased()
        let (source, copy) = try writing { transaction throws(StoreError) -> ((StoredSession, StoredSession), StoredSession?) in
            let source = try current(id, transaction)
            guard try transaction.session(id: forkId) == nil else { throw StoreError.sessionExists(forkId) }
            let session: HostSession
            do throws(InputError) { session = try source.session.forked(as: forkId) } catch { throw .input(error) }
            let ord = try transaction.insertSession(NewSessionRow(
                id: "forking/" + UUID().uuidString.lowercased(), session: session, wallOriginMs: source.wallOriginMs,
                ttlMs: nil, nowMs: unixNow(), hidden: true))
            let copy = StoredSession(session: session, wallOriginMs: source.wallOriginMs, ord: ord)
            // The ledger changes with every input, so it is copied as it stands now, with the state.
            try transaction.copyRecords(to: copy.ord, from: source.ord)
            return ((source, copy), nil)
        }
        do throws(StoreError) {
            let last = source.session.lastSeq
            // Each transaction first makes sure the source is still there: a fork of a session
            // removed meanwhile must not appear after its removal.
            let sourceStored = { (transaction: any StorageTransaction) throws(StoreError) in
                guard let status = try transaction.status(ord: source.ord), status < 2 else { throw StoreError.sessionNotFound(id) }
            }
            for start in stride(from: 0, to: last, by: chunkRows) {
                try writing { transaction throws(StoreError) in
                    try sourceStored(transaction)
                    try transaction.copyEntries(to: copy.ord, from: source.ord, after: start, upTo: min(start + chunkRows, last))
                    return ((), nil)
                }
                storage.yieldToWriters()
            }
            try writing { transaction throws(StoreError) in
                try sourceStored(transaction)
                guard try transaction.session(id: forkId) == nil else { throw StoreError.sessionExists(forkId) }
                try transaction.reveal(ord: copy.ord, id: forkId, copy.session, nowMs: unixNow())
                return ((), copy)
            }
        } catch {
            // Left hidden: the reclaimer removes it.
            try? writing { transaction throws(StoreError) in
                try transaction.hide(ord: copy.ord)
                return ((), nil)
            }
            reclaimer?.poke()
            throw error
        }
        return copy
    }
}

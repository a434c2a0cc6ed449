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
    public static let defaultChunkRows = 2000

    /// The reclaimer's work: deletes the rows of sessions being removed, one chunk per
    /// transaction, until none is left.
    func reclaimRemovedSessions() throws(StoreError) {
        // Looked up without a write transaction: with nothing to remove, no commit is made.
        while let ord = try readingWriter({ () throws(SQLiteError) in try statements.nextRemoving.rows { $0.int64(0) }.first }) {
            try writing { () throws(StoreError) in
                let chunk: [SQLiteValue] = [.integer(ord), .integer(chunkRows)]
                var removed = 0
                for statement in [statements.reclaimTimeline, statements.reclaimViolations, statements.reclaimRequests] {
                    try run(statement, chunk)
                    removed += database.changes
                }
                if removed == 0 { try run(statements.purgeSession, [.integer(ord)]) }
                return ((), nil)
            }
            writerTurns.yield()
        }
    }

    /// A copy of session `id` at its current state under `newId` (or a new UUID): its row,
    /// timeline, ledger and violations, so a suite can branch one scenario several ways. The
    /// copy is made hidden, its timeline copied a chunk per transaction (up to the source's
    /// `seq` when the fork began), and revealed under its id at the end.
    public func fork(_ id: String, as newId: String?) throws(StoreError) -> StoredSession {
        let forkId = newId ?? UUID().uuidString.lowercased()
        let (source, copy) = try writing { () throws(StoreError) -> ((StoredSession, StoredSession), StoredSession?) in
            let source = try current(id)
            guard try statements.sessionRow(id: forkId) == nil else { throw StoreError.sessionExists(forkId) }
            let session: HostSession
            do throws(InputError) { session = try source.session.forked(as: forkId) } catch { throw .input(error) }
            try run(statements.insertSession, [
                .text("forking/" + UUID().uuidString.lowercased()), .text(""), .null, .integer(2),
                .text(session.config.clock.rawValue), .integer(source.wallOriginMs), .null,
                .integer(session.version), .blob(session.stateBytes), .null, .integer(unixNow()),
            ])
            let copy = StoredSession(session: session, wallOriginMs: source.wallOriginMs, ord: try statements.lastOrd())
            // The ledger changes with every input, so it is copied as it stands now, with the state.
            try run(statements.copyRequests, [.integer(copy.ord), .integer(source.ord)])
            return ((source, copy), nil)
        }
        do throws(StoreError) {
            let last = source.session.lastSeq
            // Each transaction first makes sure the source is still there: a fork of a session
            // removed meanwhile must not appear after its removal.
            let sourceStored = { () throws(StoreError) in
                let status = try self.reading { () throws(SQLiteError) in
                    try self.statements.sessionStatus.rows([.integer(source.ord)]) { $0.int64(0) }.first
                }
                guard let status, status < 2 else { throw StoreError.sessionNotFound(id) }
            }
            for start in stride(from: 0, to: last, by: chunkRows) {
                try writing { () throws(StoreError) in
                    try sourceStored()
                    let range: [SQLiteValue] = [.integer(copy.ord), .integer(source.ord), .integer(start),
                                                .integer(min(start + chunkRows, last))]
                    try run(statements.copyTimelineRange, range)
                    try run(statements.copyViolationsRange, range)
                    return ((), nil)
                }
                writerTurns.yield()
            }
            try writing { () throws(StoreError) in
                try sourceStored()
                guard try statements.sessionRow(id: forkId) == nil else { throw StoreError.sessionExists(forkId) }
                let session = copy.session
                try run(statements.revealSession, [
                    .text(forkId), .text(session.uid), .text(session.config.label), .integer(session.isClosed ? 1 : 0),
                    nextDue(session), .integer(copy.ord), .integer(unixNow()),
                ])
                return ((), copy)
            }
        } catch {
            // Left hidden: the reclaimer removes it.
            try? writing { () throws(StoreError) in
                try run(statements.hideSession, [.integer(copy.ord)])
                return ((), nil)
            }
            reclaimer?.poke()
            throw error
        }
        return copy
    }
}

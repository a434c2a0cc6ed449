import Foundation
import TodayHost

/// How sessions end and go: idle expiry (`ttlMs`), purges by id, label or age. Removed rows
/// are deleted later in small transactions by the reclaimer (`Removal.swift`).
extension SessionStore {
    /// Closes (tears down, kept readable) every session idle past its `ttlMs`; returns their ids.
    @discardableResult
    package func closeIdleSessions() throws(StoreError) -> [String] {
        let idle = try storage.idleSessions(nowMs: unixNow())
        var closed: [String] = []
        for id in idle {
            do throws(StoreError) {
                _ = try applyWaiting([.input(.teardown)], to: id)
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
    package func nextIdleExpiryUnixMs() throws(StoreError) -> Millis? {
        try storage.nextIdleExpiry()
    }

    /// Unix time (ms) when the longest-closed session was closed.
    package func earliestClosedAtUnixMs() throws(StoreError) -> Millis? {
        try storage.earliestClosedAt()
    }

    /// Purges sessions closed for longer than `retentionMs`; returns how many.
    @discardableResult
    package func purgeClosed(olderThan retentionMs: Millis) throws(StoreError) -> Int {
        try purgeSessions { transaction throws(StoreError) in
            try transaction.closedSessions(closedBeforeMs: unixNow() - retentionMs)
        }
    }

    /// Ends and deletes every session with `label` (or, with `nil`, every session): rows,
    /// timelines, ledgers and violations. Returns how many were deleted.
    package func purge(label: String?) throws(StoreError) -> Int {
        try purgeSessions { transaction throws(StoreError) in try transaction.sessionsToPurge(label: label) }
    }

    /// Ends and deletes session `id`, as `purge(label:)` does; `false` when there is none. With
    /// `label` (a label-bound token's), only a session of that label: checked in the purge's own
    /// transaction, so an id purged and created under another label meanwhile is not removed.
    package func purge(id: String, label: String? = nil) throws(StoreError) -> Bool {
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
    func purgeSessions(_ select: (any StorageTransaction) throws(StoreError) -> [(ord: Int64, id: String)]) throws(StoreError) -> Int {
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
}

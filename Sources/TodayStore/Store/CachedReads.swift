import Foundation
import TodayHost

/// Reads of one session: from the cache of committed sessions, checked against the stored
/// version on shared storage, with the view's bytes encoded once per version.
extension SessionStore {
    /// The session `id`; a `wall` session caught up with the real clock first.
    package func session(_ id: String) throws(StoreError) -> StoredSession {
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
    func isCurrent(_ stored: StoredSession) throws(StoreError) -> Bool {
        guard let versionChecks else { return true }
        return try versionChecks.version(of: stored.id) == stored.version
    }

    /// The view's bytes and a tag that changes whenever anything in the view but a `wall`
    /// session's clock changes (every such change is an input or a fired timer, so it moves
    /// `version` or the timeline). Both from one read of the session: a write between two
    /// reads could otherwise pair old bytes with the new tag.
    package func taggedView(_ id: String) throws(StoreError) -> (bytes: [UInt8], tag: String) {
        let (bytes, stored) = try viewAndSession(id)
        return (bytes, Self.tag(stored))
    }

    /// What `taggedView` tags a view with.
    static func tag(_ stored: StoredSession) -> String {
        "\(stored.session.version)-\(stored.session.lastSeq)"
    }

    /// On shared storage, `taggedView` of a cached session without holding the caller's thread
    /// while its version is confirmed: `answer` gets the view, or `nil` when the cache cannot
    /// answer (not cached, a `wall` session, or stale: ask `taggedView`). `false`: nothing was
    /// started (storage this server alone writes answers `taggedView` at once).
    package func cachedTaggedView(_ id: String,
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
                return (view.bytes(of: cached), Self.tag(cached))
            })
        }
        return true
    }

    /// The session view's JSON bytes, from the cache when the session has not changed.
    package func viewBytes(_ id: String) throws(StoreError) -> [UInt8] {
        try viewAndSession(id).bytes
    }

    func viewAndSession(_ id: String) throws(StoreError) -> (bytes: [UInt8], stored: StoredSession) {
        if let (view, stored) = cache.view(id), !stored.isWall, try isCurrent(stored) {
            return (view.bytes(of: stored), stored)
        }
        let stored = try session(id)
        // Just cached by `session` (not a `wall` one): its view is encoded there, once.
        if !stored.isWall, let (view, cached) = cache.view(id), cached.ord == stored.ord, cached.version == stored.version {
            return (view.bytes(of: cached), cached)
        }
        return (stored.viewBytes, stored)
    }
}

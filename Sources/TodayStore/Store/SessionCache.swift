import Foundation
import TodayHost

/// Hot sessions, decoded, so a write does no SELECT and no decode and a read of an unchanged
/// view sends bytes already encoded. Holds only committed state: the store puts a session
/// here after its transaction commits. Bounded: past `capacity` the least recently used
/// eighth is dropped (it is reloaded from the database when next needed).
final class SessionCache: @unchecked Sendable {
    struct Entry {
        var stored: StoredSession
        /// The view's JSON for `stored`, encoded at most once, by whoever needs it first: the
        /// answer to the write that made `stored` (the store puts that write's here) or a read.
        /// Not used for `wall` sessions, whose clock moves between reads.
        var view: EncodedView
        var lastUse: UInt64
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var entries: [String: Entry] = [:]
    private var tick: UInt64 = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func stored(_ id: String) -> StoredSession? {
        lock.lock()
        defer { lock.unlock() }
        tick += 1
        entries[id]?.lastUse = tick
        return entries[id]?.stored
    }

    /// The cached session and its view (encoded once, on first use).
    func view(_ id: String) -> (view: EncodedView, stored: StoredSession)? {
        lock.lock()
        defer { lock.unlock() }
        guard var entry = entries[id] else { return nil }
        tick += 1
        entry.lastUse = tick
        entries[id] = entry
        return (entry.view, entry.stored)
    }

    /// Keeps `stored` unless the cache already holds a later revision of the same row (two
    /// commits on shared storage may report back in either order).
    /// `view`: the view of `stored` (a write's, shared with its answer), else a new one.
    func put(_ stored: StoredSession, view: EncodedView? = nil) {
        lock.lock()
        defer { lock.unlock() }
        if let held = entries[stored.id]?.stored, held.ord == stored.ord, held.session.lastSeq > stored.session.lastSeq { return }
        tick += 1
        entries[stored.id] = Entry(stored: stored, view: view ?? EncodedView(), lastUse: tick)
        if entries.count > capacity { evict() }
    }

    func remove(_ ids: [String]) {
        lock.lock()
        defer { lock.unlock() }
        for id in ids { entries.removeValue(forKey: id) }
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    private func evict() {
        let oldest = entries.sorted { $0.value.lastUse < $1.value.lastUse }.prefix(max(1, capacity / 8))
        for (id, _) in oldest { entries.removeValue(forKey: id) }
    }
}

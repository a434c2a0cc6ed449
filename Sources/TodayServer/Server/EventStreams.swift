import Foundation
import TodayHost
import TodayStore

/// The open Server-Sent Events streams: after each commit the sessions that grew are marked,
/// and one thread sends their new entries to the streams that follow them, plus a comment
/// heartbeat to every stream every `heartbeat` seconds (which also finds clients that left).
package final class EventStreams: @unchecked Sendable {
    /// What a stream follows and how far it got.
    private enum Follow {
        /// One session (row `ord`: the session the stream was opened on), after `seq`.
        case session(id: String, ord: Int64, after: Int)
        /// Every session of one account (of one label, for a label-bound token), each after
        /// its own `seq`.
        case account(uid: String, label: String?, after: [String: Cursor])
    }

    /// How far an account stream got in one session. A session is its row, not its id: an id
    /// purged and created again is another session, perhaps of another account.
    private struct Cursor {
        let ord: Int64
        var seq: Int
    }

    private struct Subscriber {
        let stream: EventStream
        var follow: Follow
    }

    private let store: SessionStore
    private let heartbeat: TimeInterval
    /// What the heartbeat's interval is measured on (`SystemTime`; a test's `ManualTime`).
    private let time: any TimeSource
    private let lock = NSLock()
    // Guarded by `lock`.
    private var subscribers: [Int: Subscriber] = [:]
    private var nextKey = 0
    private var changed: Set<String> = []
    private var fresh: Set<Int> = []
    /// Any session may have changed: every stream looks again, an account stream for sessions
    /// of its account it did not know of too.
    private var everything = false
    private var nextHeartbeat: Date
    private var closed = false
    private var loop: BackgroundLoop!

    package init(store: SessionStore, heartbeat: TimeInterval, time: any TimeSource = SystemTime()) {
        self.store = store
        self.heartbeat = heartbeat
        self.time = time
        nextHeartbeat = time.now.addingTimeInterval(heartbeat)
        loop = BackgroundLoop(name: "todaysim-events", nextWake: { [unowned self] in
            lock.lock()
            defer { lock.unlock() }
            return nextHeartbeat
        }, time: time) { [unowned self] in
            deliver()
        }
        loop.start()
    }

    /// A stream of one session's entries after `seq` (Last-Event-ID); `ord`: its row when the
    /// stream was asked for.
    func follow(session id: String, ord: Int64, after seq: Int) -> EventStream {
        subscribe(.session(id: id, ord: ord, after: seq))
    }

    /// A stream of every session of `uid` (with `label`, when given), from now on.
    func follow(uid: String, label: String?, currentSessions: [(id: String, ord: Int64, lastSeq: Int)]) -> EventStream {
        let cursors = currentSessions.map { ($0.id, Cursor(ord: $0.ord, seq: $0.lastSeq)) }
        return subscribe(.account(uid: uid, label: label, after: Dictionary(cursors, uniquingKeysWith: { $1 })))
    }

    private func subscribe(_ follow: Follow) -> EventStream {
        let stream = EventStream()
        stream.push(Array(": todaysim events\n\n".utf8))
        lock.lock()
        nextKey += 1
        let key = nextKey
        subscribers[key] = Subscriber(stream: stream, follow: follow)
        fresh.insert(key)
        let isClosed = closed
        lock.unlock()
        stream.onGone = { [weak self] in self?.remove(key) }
        stream.onDrained = { [weak self] in self?.resume(key) }
        if isClosed { stream.close() }
        loop.poke()
        return stream
    }

    /// The store committed entries for these sessions (or purged them).
    package func sessionsChanged(_ ids: [String]) {
        lock.lock()
        changed.formUnion(ids)
        lock.unlock()
        loop.poke()
    }

    /// Any session may have changed (what other servers wrote was lost).
    package func everySessionChanged() {
        lock.lock()
        everything = true
        lock.unlock()
        loop.poke()
    }

    /// Ends every stream (the server is stopping).
    package func stop() {
        lock.lock()
        closed = true
        let all = subscribers.values.map(\.stream)
        lock.unlock()
        for stream in all { stream.close() }
        loop.stop()
    }

    package var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return subscribers.count
    }

    /// A stream that was behind has sent its backlog: it goes on from its cursor.
    private func resume(_ key: Int) {
        lock.lock()
        fresh.insert(key)
        lock.unlock()
        loop.poke()
    }

    private func remove(_ key: Int) {
        lock.lock()
        subscribers.removeValue(forKey: key)
        lock.unlock()
    }

    private func deliver() {
        lock.lock()
        let changedNow = changed
        changed = []
        let freshNow = fresh
        fresh = []
        let everythingNow = everything
        everything = false
        let beat = time.hasReached(nextHeartbeat)
        if beat { nextHeartbeat = time.now.addingTimeInterval(heartbeat) }
        let current = subscribers
        lock.unlock()

        for (key, subscriber) in current {
            lock.lock()
            let stopping = closed
            lock.unlock()
            if stopping { return }  // the stop waits for this loop: no more sending
            var follow = subscriber.follow
            switch follow {
            case let .session(id, ord, after):
                guard everythingNow || freshNow.contains(key) || changedNow.contains(id),
                      let next = send(sessionId: id, ord: ord, after: after, to: subscriber.stream, qualified: false)
                else { break }
                follow = .session(id: id, ord: ord, after: next)
            case let .account(uid, label, after):
                var cursors = after
                // A stream that was behind goes on for every session it follows. A new one (or
                // one that was behind) also looks for sessions of its account it never heard of:
                // one created between the handler's listing and the subscription was announced
                // to nobody; so were those created elsewhere while news was lost.
                let fresh = freshNow.contains(key)
                var ids = changedNow.union(fresh || everythingNow ? Set(after.keys) : [])
                if fresh || everythingNow { ids.formUnion(accountSessions(uid: uid, label: label)) }
                for id in ids {
                    cursors[id] = sendAccountEntries(of: id, uid: uid, label: label, from: cursors[id], to: subscriber.stream)
                }
                follow = .account(uid: uid, label: label, after: cursors)
            }
            if beat { subscriber.stream.push(Array(": heartbeat\n\n".utf8)) }
            lock.lock()
            if subscribers[key] != nil { subscribers[key]?.follow = follow }
            lock.unlock()
        }
    }

    /// The ids of `uid`'s sessions now (of `label`, when given); none when the storage fails.
    private func accountSessions(uid: String, label: String?) -> [String] {
        var ids: [String] = []
        var cursor: String?
        repeat {
            guard let page = try? store.list(uid: uid, label: label, closed: nil, limit: 1000, after: cursor) else { return ids }
            ids += page.sessions.map(\.id)
            cursor = page.next
        } while cursor != nil
        return ids
    }

    /// Sends an account stream what is new in session `id`; returns where it got, `nil` when
    /// the session is not one it follows (any more). The session it follows goes on after an
    /// `accountSwitch` (the switch is part of its story); a session it meets, or one created
    /// again under a followed id, must be of the account and is sent from its start.
    private func sendAccountEntries(of id: String, uid: String, label: String?, from cursor: Cursor?,
                                    to stream: EventStream) -> Cursor? {
        let stored: StoredSession
        do throws(StoreError) {
            stored = try store.session(id)
        } catch {
            if case .sessionNotFound = error { return nil }
            return cursor  // the storage failed: the next change of it tries again
        }
        guard label == nil || stored.session.config.label == label else { return nil }
        var next: Cursor
        if let cursor, cursor.ord == stored.ord {
            next = cursor
        } else {
            guard stored.session.uid == uid else { return nil }
            next = Cursor(ord: stored.ord, seq: 0)
        }
        if let seq = send(sessionId: id, ord: next.ord, after: next.seq, to: stream, qualified: true) { next.seq = seq }
        return next
    }

    /// Sends the entries after `seq` of session `id` as row `ord`; returns the new cursor. A
    /// single-session stream ends (`nil`) once the id names no such row (purged, perhaps created
    /// again since: another session, never continued), as it does after a closed session's
    /// last entry. An account stream keeps its place: its next look at the id finds the new row
    /// (`sendAccountEntries`), or none.
    private func send(sessionId id: String, ord: Int64, after seq: Int, to stream: EventStream, qualified: Bool) -> Int? {
        var cursor = seq
        while true {
            // The page's entries are all of the row it names: compared, not looked up apart.
            guard let page = try? store.timeline(id, after: cursor, limit: 500, kind: nil), page.ord == ord else {
                if qualified { return cursor }
                stream.close()
                return nil
            }
            var bytes: [UInt8] = []
            for entry in page.entries {
                guard let parsed = try? JSON.parse(bytes: entry), let entrySeq = parsed["seq"]?.int64Value else { continue }
                let kind = parsed["kind"]?.stringValue ?? "entry"
                let eventId = qualified ? "\(id)/\(entrySeq)" : "\(entrySeq)"
                bytes += Array("id: \(eventId)\nevent: \(kind)\ndata: ".utf8) + entry + Array("\n\n".utf8)
            }
            if !bytes.isEmpty { stream.push(bytes) }
            cursor = page.next
            if !page.more { break }
            if stream.isEnded { return cursor }
            if stream.backlog > EventStream.backlogLimit {
                stream.markBehind()
                return cursor
            }
        }
        if !qualified, let stored = try? store.session(id), stored.ord != ord || stored.session.isClosed { stream.close() }
        return cursor
    }
}

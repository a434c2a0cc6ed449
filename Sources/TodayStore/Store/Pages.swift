import Foundation
import TodayHost

/// Reads of many rows: session lists, timeline pages, a session's report and the violations
/// across sessions.
extension SessionStore {
    package struct SessionPage: Sendable {
        package var sessions: [StoredSession]
        /// The cursor of the next page; `nil` at the end.
        package var next: String?
    }

    /// Sessions oldest first, filtered by `uid`, `label` and closed-ness.
    package func list(uid: String?, label: String?, closed: Bool?, limit: Int, after cursor: String?) throws(StoreError) -> SessionPage {
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
                _ = stored.session.catchUp(toWallClock: stored.wallNowMs(unixNowMs: wallNow ?? 0), ledger: InMemoryLedger())  // in memory only: no record is read
            }
            sessions.append(stored)
        }
        let next = rows.count > limit ? sessions.last.map { String($0.ord) } : nil
        return SessionPage(sessions: sessions, next: next)
    }

    package struct TimelinePage: Sendable {
        /// Each entry's JSON text, as stored.
        package var entries: [[UInt8]]
        package var next: Int
        package var more: Bool
        /// The session's last `seq` when the page was read (its `ETag`).
        package var lastSeq: Int
        /// The session's row (`StoredSession.ord`) the entries are of.
        package var ord: Int64
    }

    /// Entries after `seq`, oldest first, optionally of one kind.
    package func timeline(_ id: String, after seq: Int, limit: Int, kind: String?) throws(StoreError) -> TimelinePage {
        let stored = try session(id)
        guard let rows = try storage.timeline(id: id, ord: stored.ord, after: seq, kind: kind, limit: limit + 1) else {
            throw .sessionNotFound(id)
        }
        let page = rows.prefix(limit)
        return TimelinePage(entries: page.map(\.1), next: page.last?.0 ?? seq, more: rows.count > limit,
                            lastSeq: stored.session.lastSeq, ord: stored.ord)
    }

    /// The session's verdict (M1–M9): its violations and how each native request ended.
    package func report(_ id: String) throws(StoreError) -> SessionReport {
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

    package struct ViolationPage: Sendable {
        /// Each violation's session id and its timeline entry's JSON as stored.
        package var violations: [(sessionId: String, entry: [UInt8])]
        package var next: String?
    }

    /// Violations across sessions, newest last, filtered by the sessions' `uid` and by `code`.
    package func violations(uid: String?, label: String? = nil, code: String?, limit: Int,
                           after cursor: String?) throws(StoreError) -> ViolationPage {
        let after = cursor.flatMap { Int64($0) } ?? 0
        let rows = try storage.violations(after: after, uid: uid, label: label, code: code, limit: limit + 1)
        let page = rows.prefix(limit)
        return ViolationPage(violations: page.map { ($0.sessionId, $0.entry) },
                             next: rows.count > limit ? page.last.map { String($0.cursor) } : nil)
    }
}

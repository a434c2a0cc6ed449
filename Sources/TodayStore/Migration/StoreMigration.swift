import Foundation
import TodayHost

/// `todaysim migrate --from PATH.sqlite --to postgres://…` (issue 14, item 6): copies a SQLite
/// store into an empty PostgreSQL one, so a team moves from the embedded default to the shared
/// store with its sessions, timelines, request ledgers, violations and idempotency keys.
///
/// What stays and what is new: every column of a session (state, wall-clock origin, TTL, label,
/// uid, closed and when, next timer, version, last activity), each timeline entry at its `seq`,
/// the ledger, the keys (still per session) are copied byte for byte. `ord`s are the target's
/// own (an identity): sessions are inserted in the source's order and violations in the order
/// they were recorded across sessions, so lists and `GET /v1/violations` read in the same order
/// (their cursors are new: a cursor from the old server does not carry over).
///
/// The copy goes in transactions of about `chunkRows` rows rather than one per session or one
/// for all: a session with a long timeline would otherwise be one long transaction on a database
/// others share, and thousands of tiny sessions thousands of commits. It is still all or
/// nothing for readers: sessions stay hidden until one last transaction shows them all (see
/// `MigrationTarget`), and a failed copy leaves nothing visible.
package final class StoreMigration {
    /// What was copied.
    package struct Summary: Equatable, Sendable, CustomStringConvertible {
        package var sessions = 0
        package var entries = 0
        package var records = 0
        package var violations = 0
        package var keys = 0

        package var description: String {
            "\(sessions) sessions, \(entries) timeline entries, \(records) request records, \(violations) violations, \(keys) idempotency keys"
        }
    }

    package static let defaultChunkRows = 1000
    /// A transaction is committed past this many bytes too (states and answers may be large).
    static let chunkBytes = 8 << 20

    /// The target, password masked: what messages may show.
    package var targetName: String { target.name }
    private let source: MigrationSource
    private let target: MigrationTarget
    private let unixNow: @Sendable () -> Millis

    /// Opens the source (`path`, a SQLite file: not one a running todaysim serves) and the
    /// target (`uri`, PostgreSQL: reachable, its schema made or upgraded, holding no session).
    /// Every refusal is thrown here, before anything is copied; the source stays locked until
    /// `close`.
    package init(from path: String, to uri: String, chunkRows: Int = StoreMigration.defaultChunkRows,
                unixNow: @escaping @Sendable () -> Millis = SessionStore.systemUnixNow) throws(StoreError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > 0 else {
            throw .unusable(path: path, reason: "the source \(path) is not a todaysim database file (missing or empty)")
        }
        let rows = max(1, chunkRows)
        do {
            source = try MigrationSource(path: path, rowLimit: rows, byteBudget: Self.chunkBytes)
        } catch {
            throw .unusable(path: path, reason: "the source \(path): \(error)")
        }
        do {
            target = try MigrationTarget(uri: uri, rowLimit: rows, byteBudget: Self.chunkBytes)
        } catch {
            source.close()
            throw error
        }
        self.unixNow = unixNow
    }

    /// Releases the source file's lock.
    package func close() { source.close() }

    /// Copies everything, then shows it. On failure nothing is visible in the target (what was
    /// copied is removed, or removed by the next run when the database was out of reach).
    package func copy() throws(StoreError) -> Summary {
        do {
            try target.removeLeftovers()
            var summary = Summary()
            // Source session ord → target ord, for the violations copied last.
            var ords: [Int64: Int64] = [:]
            summary.sessions = try pages(after: Int64(0), source.sessions, key: \.ord) { sessions throws(StoreError) in
                for session in sessions {
                    let ord = try target.insert(session, nowMs: unixNow())
                    ords[session.ord] = ord
                    try copyRows(of: session.ord, to: ord, counting: &summary)
                }
            }
            summary.violations = try pages(after: Int64(0), source.violations, key: \.ord) { violations throws(StoreError) in
                try target.insert(violations: try violations.map { violation throws(StoreError) in
                    guard let ord = ords[violation.session] else {
                        throw .corrupt("violation \(violation.ord) names session \(violation.session), which was not copied")
                    }
                    return (session: ord, seq: violation.seq, code: violation.code)
                })
            }
            try target.reveal(expected: summary.sessions)
            return summary
        } catch {
            target.abandon()
            throw error
        }
    }

    /// The timeline, ledger and keys of session `source` (`ord` in the target).
    private func copyRows(of source: Int64, to ord: Int64, counting summary: inout Summary) throws(StoreError) {
        summary.entries += try pages(after: 0, { after throws(StoreError) in try self.source.entries(of: source, after: after) },
                                     key: \.seq) { entries throws(StoreError) in try target.insert(entries, of: ord) }
        summary.records += try pages(after: nil, { after throws(StoreError) in try self.source.records(of: source, after: after) },
                                     key: \.requestId) { records throws(StoreError) in try target.insert(records, of: ord) }
        summary.keys += try pages(after: nil, { after throws(StoreError) in try self.source.keys(of: source, after: after) },
                                  key: \.key) { keys throws(StoreError) in try target.insert(keys, of: ord) }
    }

    /// Reads pages with `read` from `start` on, each after the last row's `key`, and hands each
    /// to `write`, until one is empty; returns how many rows went.
    private func pages<Row, Key>(after start: Key, _ read: (Key) throws(StoreError) -> [Row], key: (Row) -> Key,
                                 _ write: ([Row]) throws(StoreError) -> Void) throws(StoreError) -> Int {
        var copied = 0
        var after = start
        while true {
            let rows = try read(after)
            guard let last = rows.last else { return copied }
            try write(rows)
            copied += rows.count
            after = key(last)
        }
    }
}

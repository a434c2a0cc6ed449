import Foundation
import TodayHost

extension SessionStore {
    /// A host trace's replay kept as an ordinary session (`POST /v1/host-traces?keep=ID`). Made
    /// hidden as a fork is (`Removal.swift`), its timeline written a chunk per
    /// transaction as the verifier makes it (so a long trace is never held whole), then shown
    /// under its id with its final state and request ledger in one last transaction. A replay
    /// given up (a bad trace, a client gone mid-upload, a store error) is hidden again and
    /// removed by the reclaimer; a restart removes one a crash left half-made.
    package final class KeptReplay: @unchecked Sendable {
        package let id: String
        private let store: SessionStore
        private let ord: Int64
        private let createdAtMs: Millis
        private var ended = false

        fileprivate init(store: SessionStore, id: String, ord: Int64, createdAtMs: Millis) {
            self.store = store
            self.id = id
            self.ord = ord
            self.createdAtMs = createdAtMs
        }

        /// Stores the next entries of the replay's timeline (in `seq` order).
        package func append(_ entries: [TimelineEntry]) throws(StoreError) {
            guard !entries.isEmpty else { return }
            for start in stride(from: 0, to: entries.count, by: store.chunkRows) {
                let chunk = entries[start..<min(start + store.chunkRows, entries.count)]
                try store.writing { transaction throws(StoreError) in
                    try transaction.insertEntries(ord: ord, chunk.map(EncodedEntry.init))
                    return ((), nil)
                }
                store.storage.yieldToWriters()
            }
        }

        /// Shows the replay under its id, as it stands at the end of the trace: `session` its
        /// final state, `ledger` its request ledger. `409 session_exists` if the id was taken
        /// meanwhile (the replay is then given up).
        package func finish(_ session: HostSession, ledger: InMemoryLedger) throws(StoreError) -> StoredSession {
            ended = true
            do throws(StoreError) {
                return try store.writing { transaction throws(StoreError) in
                    guard try transaction.session(id: id) == nil else { throw StoreError.sessionExists(id) }
                    try transaction.saveRecords(ord: ord, ledger.records.keys.sorted().compactMap { ledger.records[$0] })
                    try transaction.reveal(ord: ord, id: id, session, nowMs: store.unixNow())
                    let stored = StoredSession(session: session, wallOriginMs: createdAtMs, ord: ord)
                    return (stored, stored)
                }
            } catch {
                hide()
                throw error
            }
        }

        /// Gives the replay up: nothing of it is ever shown.
        package func abandon() {
            guard !ended else { return }
            ended = true
            hide()
        }

        private func hide() {
            _ = try? store.writing { transaction throws(StoreError) in
                try transaction.hide(ord: ord)
                return ((), nil)
            }
            store.reclaimer?.poke()
        }
    }

    /// Starts keeping a replay as session `id` (`session`: the replay just created, on the
    /// virtual clock). `409 session_exists` when the id is taken.
    package func keepReplay(_ session: HostSession, as id: String) throws(StoreError) -> KeptReplay {
        try writing { transaction throws(StoreError) in
            guard try transaction.session(id: id) == nil else { throw StoreError.sessionExists(id) }
            let now = unixNow()
            let ord = try transaction.insertSession(NewSessionRow(
                id: "forking/" + UUID().uuidString.lowercased(), session: session, wallOriginMs: now,
                ttlMs: nil, nowMs: now, hidden: true))
            return (KeptReplay(store: self, id: id, ord: ord, createdAtMs: now), nil)
        }
    }

    /// How many rows are hidden now (sessions being removed, forked or kept); for tests.
    package var hiddenRowsForTesting: Int { (try? storage.hiddenRows()) ?? -1 }

    /// Whether a session `id` exists (visible): a kept replay's id is looked at before its
    /// trace is read.
    package func exists(_ id: String) throws(StoreError) -> Bool {
        do throws(StoreError) {
            _ = try session(id)
            return true
        } catch {
            if case .sessionNotFound = error { return false }
            throw error
        }
    }
}

extension EncodedEntry {
    init(_ entry: TimelineEntry) {
        var bytes: [UInt8] = []
        entry.json.write(to: &bytes)
        self.init(seq: entry.seq, kind: entry.kind.rawValue, json: bytes, violation: entry.kind == .violation ? entry.type : nil)
    }
}

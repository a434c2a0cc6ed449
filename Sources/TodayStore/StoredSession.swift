import Foundation
import TodayHost

/// A session as the store holds it: the engine's state plus where its wall clock started.
package struct StoredSession: Sendable {
    /// Any change of it forgets `knownLedger`: only a write that feeds it records knows them.
    package var session: HostSession { didSet { knownLedger = nil } }
    /// Unix time (ms) of creation: a `wall` session's clock is the real time elapsed since (C1).
    package var wallOriginMs: Millis
    /// The session's row key, for its timeline and ledger. An id purged and created again is a
    /// new row: whoever follows one session by its id (a stream, a long poll) compares this to
    /// know it still reads the same session.
    package let ord: Int64
    /// What the write that made this state read and wrote of the records its next input will
    /// look up first (`HostSession.standingLookups`): the same as the stored rows, since only a
    /// write of this session changes them and it starts from this state. A session loaded from
    /// its row has none, and a write then reads them.
    var knownLedger: LedgerRecords? = nil

    package var id: String { session.id }
    package var isWall: Bool { session.config.clock == .wall }
    /// Its row and revision, as the storage compares them (`StoredVersion`).
    var version: StoredVersion { StoredVersion(ord: ord, revision: session.lastSeq) }

    /// The session clock a `wall` session shows at Unix time `unixNowMs` (never going back).
    package func wallNowMs(unixNowMs: Millis) -> Millis {
        max(session.nowMs, unixNowMs - wallOriginMs)
    }
}

extension StoredSession {
    /// The session view's JSON.
    package var viewBytes: [UInt8] { session.viewBytes }

    /// The session a row holds.
    init(row: SessionRow) throws(StoreError) {
        self.init(session: try Self.decode(row.state), wallOriginMs: row.wallOriginMs, ord: row.ord)
    }

    /// A stored state: the binary form, or JSON as the first schema wrote it.
    static func decode(_ blob: [UInt8]) throws(StoreError) -> HostSession {
        do {
            if blob.first == UInt8(ascii: "{") { return try JSONDecoder().decode(HostSession.self, from: Data(blob)) }
            return try HostSession(stateBytes: blob)
        } catch {
            throw .corrupt("session state: \(error)")
        }
    }
}

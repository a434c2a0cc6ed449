/// What a session remembers of every request id it has seen (H4, H8, H22, M1). It grows with
/// history, so it is not part of the session state: the service keeps it in an indexed table,
/// the session looks up only the ids an input names and hands back the records it changed.
package protocol RequestLedger {
    func record(for requestId: String) -> RequestRecord?
}

package struct RequestRecord: Codable, Equatable, Sendable {
    package enum Role: String, Codable, Sendable {
        /// A native soft request (`todayPage.refreshRequested`).
        case soft
        /// A hard reload's id, carried by the URL of load `loadId`.
        case reload
        /// An id Web made up (a cached start) or sent without a native request.
        case webMinted
    }

    package var requestId: String
    package var role: Role
    package var reason: RefreshReason?
    package var cause: LoadCause?
    package var loadId: Int?
    package var requestedAtMs: Millis
    /// How many well-formed `refreshResult`s named this id.
    package var resultCount: Int = 0
    package var outcome: RequestOutcome?
    package var settledAtMs: Millis?
    /// When Web's `refreshResult` settled it (not a timeout or a navigation).
    package var answeredAtMs: Millis?
    /// The session's last `seq` when the request was made: orders requests made at one time.
    package var madeAfterSeq: Int?

    package init(requestId: String, role: Role, reason: RefreshReason? = nil, cause: LoadCause? = nil,
                loadId: Int? = nil, requestedAtMs: Millis, madeAfterSeq: Int? = nil) {
        self.requestId = requestId
        self.role = role
        self.reason = reason
        self.cause = cause
        self.loadId = loadId
        self.requestedAtMs = requestedAtMs
        self.madeAfterSeq = madeAfterSeq
    }
}

/// A ledger in memory, for the runner and tests.
package struct InMemoryLedger: RequestLedger, Codable, Equatable, Sendable {
    package private(set) var records: [String: RequestRecord] = [:]

    package init() {}

    package func record(for requestId: String) -> RequestRecord? { records[requestId] }

    package mutating func apply(_ writes: [RequestRecord]) {
        for record in writes { records[record.requestId] = record }
    }
}

/// The ledger as one input sees it: what was stored before, plus what this input wrote.
/// Each id is looked up in the base ledger at most once per input (the service's base ledger
/// is a SQL query).
struct LedgerOverlay {
    let base: any RequestLedger
    private(set) var writes: [String: RequestRecord] = [:]
    private(set) var order: [String] = []
    private let lookups = LookupMemo()

    init(base: any RequestLedger) { self.base = base }

    func record(for requestId: String) -> RequestRecord? {
        if let written = writes[requestId] { return written }
        if let remembered = lookups.records[requestId] { return remembered }
        let found = base.record(for: requestId)
        lookups.records[requestId] = .some(found)
        return found
    }

    func contains(_ requestId: String) -> Bool { record(for: requestId) != nil }

    mutating func write(_ record: RequestRecord) {
        if writes[record.requestId] == nil { order.append(record.requestId) }
        writes[record.requestId] = record
    }

    mutating func update(_ requestId: String, _ change: (inout RequestRecord) -> Void) {
        guard var record = record(for: requestId) else { return }
        change(&record)
        write(record)
    }

    var changedRecords: [RequestRecord] { order.compactMap { writes[$0] } }
}

extension RequestRecord: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.string(requestId)
        writer.raw(role)
        writer.optional(reason) { $0.raw($1) }
        writer.optional(cause) { $0.raw($1) }
        writer.optional(loadId) { $0.int($1) }
        writer.int(requestedAtMs)
        writer.int(resultCount)
        writer.optional(outcome) { $0.raw($1) }
        writer.optional(settledAtMs) { $0.int($1) }
        writer.optional(answeredAtMs) { $0.int($1) }
        writer.optional(madeAfterSeq) { $0.int($1) }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        self.init(requestId: try reader.string(), role: try reader.raw(),
                  reason: try reader.optional { reader throws(StateDecodingError) in try reader.raw() },
                  cause: try reader.optional { reader throws(StateDecodingError) in try reader.raw() },
                  loadId: try reader.optional { reader throws(StateDecodingError) in try reader.int() },
                  requestedAtMs: try reader.int64())
        resultCount = try reader.int()
        outcome = try reader.optional { reader throws(StateDecodingError) in try reader.raw() }
        settledAtMs = try reader.optional { reader throws(StateDecodingError) in try reader.int64() }
        // Records written before these two fields existed end here.
        guard !reader.isAtEnd else { return }
        answeredAtMs = try reader.optional { reader throws(StateDecodingError) in try reader.int64() }
        madeAfterSeq = try reader.optional { reader throws(StateDecodingError) in try reader.int() }
    }
}

/// Base-ledger answers already fetched during one input, misses included.
private final class LookupMemo {
    var records: [String: RequestRecord?] = [:]
}

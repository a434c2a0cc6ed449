/// What a session remembers of every request id it has seen (H4, H8, H22, M1) is a record per
/// id. It grows with history, so it is not part of the session state: the service keeps it in an
/// indexed table and gives an input the records it may read as a value (`LedgerRecords`); the
/// input hands back the records it changed (`Applied.ledgerWrites`).
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

/// A whole ledger in memory, for the runner, the trace verifier and tests.
package struct InMemoryLedger: Codable, Equatable, Sendable {
    package private(set) var records: [String: RequestRecord] = [:]

    package init() {}

    package func record(for requestId: String) -> RequestRecord? { records[requestId] }

    package mutating func apply(_ writes: [RequestRecord]) {
        for record in writes { records[record.requestId] = record }
    }

    /// All of it, as an input reads it: an id it has no record of has none.
    package var given: LedgerRecords { .whole(records) }
}

/// The request records an input may read, as a value: read by the caller before the input (the
/// store reads `HostSession.lookups(for:)` in one query). An id looked up without a record is
/// known to have none; an id never looked up is unknown, and an input that reads one is answered
/// `Application.needs` (the caller reads it and applies again: `apply` is a pure function).
package struct LedgerRecords: Equatable, Sendable {
    package enum Lookup: Equatable, Sendable {
        case found(RequestRecord)
        case absent
        case unknown
    }

    private var records: [String: RequestRecord]
    private var absent: Set<String> = []
    /// The whole ledger: every id not in `records` has no record.
    private let isWhole: Bool

    /// Nothing read yet.
    package init() {
        records = [:]
        isWhole = false
    }

    private init(whole records: [String: RequestRecord]) {
        self.records = records
        isWhole = true
    }

    package static func whole(_ records: [String: RequestRecord]) -> LedgerRecords { LedgerRecords(whole: records) }

    /// What a read of `ids` found (an id of them without a record in `found` has none).
    package mutating func add(_ found: [String: RequestRecord], lookedUp ids: some Sequence<String>) {
        for id in ids where found[id] == nil && records[id] == nil { absent.insert(id) }
        records.merge(found) { _, new in new }
    }

    /// What is known of `ids` only (found or absent), the rest forgotten.
    package func keeping(_ ids: [String]) -> LedgerRecords {
        var kept = LedgerRecords()
        for id in ids {
            if let record = records[id] {
                kept.records[id] = record
            } else if isWhole || absent.contains(id) {
                kept.absent.insert(id)
            }
        }
        return kept
    }

    /// Records written just before the input, in the same transaction (a `wall` catch-up's).
    package mutating func overlay(_ written: [RequestRecord]) {
        for record in written {
            records[record.requestId] = record
            absent.remove(record.requestId)
        }
    }

    /// Whether a read of `requestId` would tell anything new (it was never looked up).
    package func knows(_ requestId: String) -> Bool { lookup(requestId) != .unknown }

    package func lookup(_ requestId: String) -> Lookup {
        if let record = records[requestId] { return .found(record) }
        return isWhole || absent.contains(requestId) ? .absent : .unknown
    }
}

/// The ledger as one input sees it: the records it was given, plus what this input wrote; the
/// ids it read and was not given are kept (`needed`), and the input is then not applied.
struct LedgerOverlay {
    let base: LedgerRecords
    private(set) var writes: [String: RequestRecord] = [:]
    private(set) var order: [String] = []
    private let unknown = Unknown()

    init(base: LedgerRecords) { self.base = base }

    func record(for requestId: String) -> RequestRecord? {
        if let written = writes[requestId] { return written }
        switch base.lookup(requestId) {
        case let .found(record): return record
        case .absent: return nil
        case .unknown:
            unknown.ids.insert(requestId)
            return nil
        }
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

    /// The ids read that were not given, sorted; `nil` when every read was answered.
    var needed: [String]? { unknown.ids.isEmpty ? nil : unknown.ids.sorted() }
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

/// The ids an input read and was not given (a box: reads are not mutating).
private final class Unknown {
    var ids: Set<String> = []
}

@testable import TodayHost

/// Compact, hard-codable readings of a session for the H12–H23 rule tests.
///
/// A trace line is `kind:type` (docs/RULES.md#reading-the-timeline names each entry's `type`). `violation`
/// entries are left out on purpose: the contract monitor (M1–M9) never changes behaviour, and
/// its own tests pin which breaches it records.
extension TimelineEntry {
    var line: String { "\(kind.rawValue):\(type)" }
}

extension Applied {
    /// What this input appended, one `kind:type` line per entry, violations left out.
    var trace: [String] { entries.filter { $0.kind != .violation }.map(\.line) }

    /// The entries of one kind this input appended.
    func entries(_ kind: TimelineEntry.Kind) -> [TimelineEntry] { entries.filter { $0.kind == kind } }
}

extension SessionRunner {
    /// Pending timers as `kind(requestId)@dueAtMs`, in firing order (`-` for the shared deadline).
    var timers: [String] {
        session.watchdogs.map { "\($0.kind.rawValue)(\($0.requestId ?? "-"))@\($0.dueAtMs)" }
    }

    var overlay: OverlayState { session.document.overlay.state }
    var documentState: DocumentState { session.document.state }
    var loadId: Int { session.document.loadId }
    var documentURL: String { session.document.url }
    var recoveryArmed: Bool { session.recovery.armed }

    /// Every line of the timeline after `seq`, violations left out.
    func trace(after seq: Int) -> [String] {
        timeline.filter { $0.seq > seq && $0.kind != .violation }.map(\.line)
    }

    /// Goes to the background now and comes back at `returnAtMs` (H15).
    @discardableResult
    mutating func returnFromBackground(at returnAtMs: Millis, requestId: String?) throws(InputError) -> Applied {
        try apply(.lifecycle(.background))
        try advance(to: returnAtMs)
        return try apply(.lifecycle(.foreground(requestId: requestId)))
    }
}

extension Web {
    /// Any bridge message, written member by member as Web would send it.
    static func message(_ members: [(String, JSON)]) -> Input { .webEvent(.object(members)) }

    static func refreshStarted(_ members: [(String, JSON)]) -> Input {
        message([("type", "todayPage.refreshStarted")] + members)
    }

    static func refreshResult(_ members: [(String, JSON)]) -> Input {
        message([("type", "todayPage.refreshResult")] + members)
    }
}

/// The `field` of an `invalid_field` error (400), or `nil` for any other error.
func invalidField(_ error: InputError) -> String? {
    if case let .invalidField(field, _) = error { return field }
    return nil
}

extension SessionRunner {
    /// Applies an input the session must refuse as a whole (an HTTP error); the error, or
    /// `nil` when it was applied after all.
    mutating func refused(_ input: Input) -> InputError? {
        do {
            try apply(input)
            return nil
        } catch {
            return error
        }
    }
}

/// A pending timer as a test expects it: `Due(.pullWatchdog, "pull-1", 13000)`.
struct Due: Equatable, CustomStringConvertible {
    var kind: TimerKind
    var requestId: String?
    var dueAtMs: Millis

    init(_ kind: TimerKind, _ requestId: String?, _ dueAtMs: Millis) {
        self.kind = kind
        self.requestId = requestId
        self.dueAtMs = dueAtMs
    }

    var description: String { "\(kind.rawValue)(\(requestId ?? "-")) @\(dueAtMs)" }
}

extension SessionRunner {
    /// The session's pending timers, in due order (C3).
    var dueTimers: [Due] { session.watchdogs.map { Due($0.kind, $0.requestId, $0.dueAtMs) } }
}

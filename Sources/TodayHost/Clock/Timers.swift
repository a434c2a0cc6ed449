/// Milliseconds on a session's clock (C1).
package typealias Millis = Int64

/// The furthest a session clock may go: 9e15 ms (about 285,000 years), the contract's largest
/// integer. A clock move that would pass it is refused (400, nothing changes), so every sum of a
/// clock reading and a client's duration (each at most this ceiling) stays far from `Int64`
/// overflow.
package let clockCeilingMs: Millis = 9_000_000_000_000_000

/// A reading of the session clock together with the step it happens in. Every input and every
/// timer firing is one step; timers armed in the same step fire in `TimerKind` order when due
/// at the same time (C2).
package struct Instant: Equatable, Sendable {
    package var ms: Millis
    package var step: Int

    package init(ms: Millis, step: Int) {
        self.ms = ms
        self.step = step
    }

    /// A deadline `delay` after this instant, armed in this step.
    /// Saturates at `Millis.max`: a clock and a delay within the ceiling never come near it,
    /// but a session stored before the ceiling existed may hold a larger reading, and a sum on
    /// a client's number must never trap.
    package func deadline(after delay: Millis) -> Deadline {
        let (due, overflow) = ms.addingReportingOverflow(delay)
        return Deadline(dueAtMs: overflow ? .max : due, armedInStep: step)
    }
}

/// When a coordinator's timer is due. It lives inside the coordinator's state (C3): dropping the
/// state drops the timer.
package struct Deadline: Codable, Equatable, Sendable {
    package var dueAtMs: Millis
    package var armedInStep: Int

    package init(dueAtMs: Millis, armedInStep: Int) {
        self.dueAtMs = dueAtMs
        self.armedInStep = armedInStep
    }
}

/// The timers of a session. Case order is the firing order of timers armed in one step and due
/// at the same time (C2).
package enum TimerKind: String, Codable, CaseIterable, Sendable, Comparable {
    case softRefreshDeadline
    case pullWatchdog
    case headerWatchdog
    case headerHide

    var rank: Int { TimerKind.allCases.firstIndex(of: self)! }

    package static func < (lhs: TimerKind, rhs: TimerKind) -> Bool { lhs.rank < rhs.rank }
}

/// A pending timer as the session view lists it (C3).
package struct Watchdog: Equatable, Sendable {
    package var kind: TimerKind
    /// The request the timer guards; `nil` for the shared soft-refresh deadline.
    package var requestId: String?
    package var deadline: Deadline

    package var dueAtMs: Millis { deadline.dueAtMs }

    /// Due order, ties broken by the step that armed them, then by kind (C2).
    package static func firesBefore(_ lhs: Watchdog, _ rhs: Watchdog) -> Bool {
        (lhs.deadline.dueAtMs, lhs.deadline.armedInStep, lhs.kind.rank)
            < (rhs.deadline.dueAtMs, rhs.deadline.armedInStep, rhs.kind.rank)
    }
}

/// Per-session timing (C4); each value is a positive number of milliseconds.
package struct Timing: Codable, Equatable, Sendable {
    package var pullWatchdogMs: Millis = 12_000
    package var headerWatchdogMs: Millis = 12_000
    package var softRefreshDeadlineMs: Millis = 5_000
    package var headerSettleMs: Millis = 1_000
    package var foregroundThresholdMs: Millis = 5_000
    package var manualRefreshWindowMs: Millis = 10_000

    package init() {}

    /// The longest a timer an input arms can run (C1): the two thresholds arm none.
    package var longestTimer: (name: String, ms: Millis) {
        [("pullWatchdogMs", pullWatchdogMs), ("headerWatchdogMs", headerWatchdogMs),
         ("softRefreshDeadlineMs", softRefreshDeadlineMs), ("headerSettleMs", headerSettleMs)]
            .max { $0.1 < $1.1 }!
    }

    /// How far a clock move may go (C1): the clock's end less the longest timer, so a timer an
    /// input arms at that time is still due within the end, where a move can reach it.
    package var latestMoveMs: Millis { max(0, clockCeilingMs - longestTimer.ms) }

    /// Names and values in the order the API lists them.
    package var fields: [(String, Millis)] {
        Self.fieldKeyPaths.map { ($0.0, self[keyPath: $0.1]) }
    }

    nonisolated(unsafe) package static let fieldKeyPaths: [(String, WritableKeyPath<Timing, Millis>)] = [
        ("pullWatchdogMs", \.pullWatchdogMs), ("headerWatchdogMs", \.headerWatchdogMs),
        ("softRefreshDeadlineMs", \.softRefreshDeadlineMs), ("headerSettleMs", \.headerSettleMs),
        ("foregroundThresholdMs", \.foregroundThresholdMs), ("manualRefreshWindowMs", \.manualRefreshWindowMs),
    ]
}

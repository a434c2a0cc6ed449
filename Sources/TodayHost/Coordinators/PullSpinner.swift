/// The native pull-to-refresh spinner (H10, H11): started by the gesture, ended by the result
/// for the id it owns or by its watchdog.
package struct PullSpinner: Codable, Equatable, Sendable {
    package enum State: Codable, Equatable, Sendable {
        /// Next: `refreshing` on a pull gesture.
        case idle
        /// Next: `idle` on its result, watchdog, a navigation not made by the host, account
        /// switch or teardown; `refreshing` for another id on a newer gesture or a host reload.
        case refreshing(requestId: String, watchdog: Deadline)
    }

    package enum Phase: String, Codable, Sendable, Equatable {
        case idle, refreshing
    }

    package private(set) var state: State = .idle
    package private(set) var lastOutcome: RequestOutcome?

    package init() {}

    package var phase: Phase {
        if case .refreshing = state { return .refreshing }
        return .idle
    }

    /// The id the spinner waits for.
    package var owner: String? {
        if case let .refreshing(requestId, _) = state { return requestId }
        return nil
    }

    package var timers: [Watchdog] {
        guard case let .refreshing(requestId, watchdog) = state else { return [] }
        return [Watchdog(kind: .pullWatchdog, requestId: requestId, deadline: watchdog)]
    }

    /// H10: the newest gesture owns the spinner; its watchdog runs from this gesture.
    mutating func pullGesture(requestId: String, at now: Instant, watchdogMs: Millis) -> [Effect] {
        state = .refreshing(requestId: requestId, watchdog: now.deadline(after: watchdogMs))
        return [.pull(state: .refreshing, outcome: nil, requestId: requestId, rule: .h10)]
    }

    /// H11: a host-made reload carries a spinner that is still up, keeping its watchdog.
    mutating func followReload(requestId: String) -> [Effect] {
        switch state {
        case .idle:
            return []
        case let .refreshing(_, watchdog):
            state = .refreshing(requestId: requestId, watchdog: watchdog)
            return [.pull(state: .refreshing, outcome: nil, requestId: requestId, rule: .h11)]
        }
    }

    /// H11: the result for the owned id ends the spinner with that result's outcome.
    mutating func refreshResult(requestId: String, status: ResultStatus) -> [Effect] {
        guard owner == requestId else { return [] }
        return end(status.outcome)
    }

    /// Ends the spinner if it owns `requestId` (its request was consumed with no reload).
    mutating func requestConsumed(requestId: String, outcome: RequestOutcome) -> [Effect] {
        guard owner == requestId else { return [] }
        return end(outcome)
    }

    mutating func timerFired(_ kind: TimerKind) -> [Effect] {
        guard kind == .pullWatchdog else { return [] }
        return end(.timedOut)
    }

    mutating func end(_ outcome: RequestOutcome) -> [Effect] {
        switch state {
        case .idle:
            return []
        case let .refreshing(requestId, _):
            state = .idle
            lastOutcome = outcome
            return [.pull(state: .idle, outcome: outcome, requestId: requestId, rule: .h11)]
        }
    }
}

extension PullSpinner: StateCodable {
    package func encode(to writer: inout StateWriter) {
        switch state {
        case .idle: writer.int(0)
        case let .refreshing(requestId, watchdog): writer.int(1); writer.string(requestId); writer.value(watchdog)
        }
        writer.optional(lastOutcome) { $0.raw($1) }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        switch try reader.int() {
        case 0: state = .idle
        case 1: state = .refreshing(requestId: try reader.string(), watchdog: try reader.value())
        default: throw reader.error("unknown pull state")
        }
        lastOutcome = try reader.optional { reader throws(StateDecodingError) in try reader.raw() }
    }
}

/// The native pull-to-refresh spinner (H10, H11): started by the gesture, ended by the result
/// for the id it owns or by its watchdog.
package struct PullSpinner: Equatable, Sendable {
    package enum State: Equatable, Sendable {
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

    /// H11: a host-made reload carries a spinner that is still up, keeping its watchdog. A
    /// repeated pull's reload is already the spinner's own (H10).
    mutating func followReload(requestId: String) -> [Effect] {
        switch state {
        case .idle:
            return []
        case let .refreshing(ownId, _) where ownId == requestId:
            return []
        case let .refreshing(_, watchdog):
            state = .refreshing(requestId: requestId, watchdog: watchdog)
            return [.pull(state: .refreshing, outcome: nil, requestId: requestId, rule: .h11)]
        }
    }

    /// H11: the result for the owned id ends the spinner with that result's outcome.
    mutating func refreshResult(requestId: String, status: ResultStatus) -> [Effect] {
        requestConsumed(requestId: requestId, outcome: status.outcome)
    }

    /// Ends the spinner if it owns `requestId` (its request was consumed with no reload).
    mutating func requestConsumed(requestId: String, outcome: RequestOutcome) -> [Effect] {
        switch state {
        case let .refreshing(ownId, _) where ownId == requestId: return end(outcome)
        case .idle, .refreshing: return []
        }
    }

    mutating func timerFired(_ kind: TimerKind) -> [Effect] {
        switch kind {
        case .pullWatchdog: return end(.timedOut)
        case .softRefreshDeadline, .headerWatchdog, .headerHide: return []
        }
    }

    /// The spinner ends with `outcome` (a navigation not made by the host, an account switch,
    /// teardown, a failure that made no reload), if it was up.
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

extension PullSpinner {
    init(_ snapshot: SessionSnapshot.Pull) {
        switch snapshot.state {
        case .idle: state = .idle
        case let .refreshing(requestId, watchdog): state = .refreshing(requestId: requestId, watchdog: watchdog)
        }
        lastOutcome = snapshot.lastOutcome
    }

    var snapshot: SessionSnapshot.Pull {
        switch state {
        case .idle: return SessionSnapshot.Pull(state: .idle, lastOutcome: lastOutcome)
        case let .refreshing(requestId, watchdog):
            return SessionSnapshot.Pull(state: .refreshing(requestId: requestId, watchdog: watchdog), lastOutcome: lastOutcome)
        }
    }
}

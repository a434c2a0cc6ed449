/// The native header feedback (H12–H14): renders what Web commands, correlated by `requestId`.
package struct HeaderRenderer: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `refreshing` on a valid `refreshStarted`.
        case hidden
        /// Next: `updated` / `failed` / `hidden` on its result, `hidden` on its watchdog or a
        /// clear, `refreshing` for another id on a new start.
        case refreshing(requestId: String, watchdog: Deadline)
        /// Next: `hidden` when the settle time passes or on a clear; `refreshing` on a new start.
        case updated(requestId: String, hide: Deadline)
        /// Next: as `updated`.
        case failed(requestId: String, hide: Deadline)
    }

    /// The state's name as the API shows it.
    package enum Phase: String, Codable, Sendable, Equatable {
        case hidden, refreshing, updated, failed
    }

    package private(set) var state: State = .hidden

    package init() {}

    package var phase: Phase {
        switch state {
        case .hidden: return .hidden
        case .refreshing: return .refreshing
        case .updated: return .updated
        case .failed: return .failed
        }
    }

    package var requestId: String? {
        switch state {
        case .hidden: return nil
        case let .refreshing(requestId, _), let .updated(requestId, _), let .failed(requestId, _): return requestId
        }
    }

    /// The id whose result the header still waits for.
    package var owner: String? {
        if case let .refreshing(requestId, _) = state { return requestId }
        return nil
    }

    package var timers: [Watchdog] {
        switch state {
        case .hidden: return []
        case let .refreshing(requestId, watchdog):
            return [Watchdog(kind: .headerWatchdog, requestId: requestId, deadline: watchdog)]
        case let .updated(requestId, hide), let .failed(requestId, hide):
            return [Watchdog(kind: .headerHide, requestId: requestId, deadline: hide)]
        }
    }

    /// H12: a valid start replaces any active id and cancels a pending hide.
    mutating func refreshStarted(requestId: String, at now: Instant, watchdogMs: Millis) -> [Effect] {
        let from = phase
        let previousId = self.requestId
        state = .refreshing(requestId: requestId, watchdog: now.deadline(after: watchdogMs))
        if from == .refreshing, previousId == requestId { return [] }
        return [.header(from: from, to: .refreshing, requestId: requestId, rule: .h12)]
    }

    /// H13: a result settles the header only when it carries the header's own id.
    mutating func refreshResult(requestId: String, status: ResultStatus, at now: Instant, settleMs: Millis) -> [Effect] {
        switch state {
        case let .refreshing(ownId, _) where ownId == requestId:
            switch status {
            case .succeeded:
                state = .updated(requestId: requestId, hide: now.deadline(after: settleMs))
                return [.header(from: .refreshing, to: .updated, requestId: requestId, rule: .h13)]
            case .failed:
                state = .failed(requestId: requestId, hide: now.deadline(after: settleMs))
                return [.header(from: .refreshing, to: .failed, requestId: requestId, rule: .h13)]
            case .cancelled, .unsupported, .other:
                state = .hidden
                return [.header(from: .refreshing, to: .hidden, requestId: requestId, rule: .h13)]
            }
        case .hidden, .refreshing, .updated, .failed:
            return []
        }
    }

    /// The header watchdog hides (never `updated`); the settle timer hides after `updated`/`failed`.
    mutating func timerFired(_ kind: TimerKind) -> [Effect] {
        switch (state, kind) {
        case (.refreshing, .headerWatchdog), (.updated, .headerHide), (.failed, .headerHide):
            return clear(.h13)
        case (.hidden, _), (.refreshing, _), (.updated, _), (.failed, _):
            return []
        }
    }

    /// H14: navigation, content termination, account switch and teardown hide the header and
    /// cancel its timers. `rule`: what hides it (H14 those, H13 its own timers, H6 a deadline
    /// that reloads nothing).
    mutating func clear(_ rule: Rule) -> [Effect] {
        let from = phase
        let requestId = self.requestId
        state = .hidden
        if from == .hidden { return [] }
        return [.header(from: from, to: .hidden, requestId: requestId, rule: rule)]
    }
}

extension HeaderRenderer {
    init(_ snapshot: SessionSnapshot.Header) {
        switch snapshot.state {
        case .hidden: state = .hidden
        case let .refreshing(requestId, watchdog): state = .refreshing(requestId: requestId, watchdog: watchdog)
        case let .updated(requestId, hide): state = .updated(requestId: requestId, hide: hide)
        case let .failed(requestId, hide): state = .failed(requestId: requestId, hide: hide)
        }
    }

    var snapshot: SessionSnapshot.Header {
        switch state {
        case .hidden: return SessionSnapshot.Header(state: .hidden)
        case let .refreshing(requestId, watchdog): return SessionSnapshot.Header(state: .refreshing(requestId: requestId, watchdog: watchdog))
        case let .updated(requestId, hide): return SessionSnapshot.Header(state: .updated(requestId: requestId, hide: hide))
        case let .failed(requestId, hide): return SessionSnapshot.Header(state: .failed(requestId: requestId, hide: hide))
        }
    }
}

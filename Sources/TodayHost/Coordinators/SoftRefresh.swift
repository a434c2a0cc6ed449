/// Native soft requests waiting for Web's result and their shared deadline (H4–H7).
package struct SoftRefresh: Equatable, Sendable {
    package struct PendingRequest: Codable, Equatable, Sendable {
        package var requestId: String
        package var reason: RefreshReason?
        package var requestedAtMs: Millis
    }

    package enum State: Equatable, Sendable {
        /// Next: `waiting` on a request.
        case idle
        /// At least one request, in the order made, under the deadline armed when the first
        /// joined (H5). Next: `waiting` with one more (same deadline) or one fewer; `idle` when
        /// the last is answered, the deadline passes or the document goes.
        case waiting(pending: [PendingRequest], deadline: Deadline)
    }

    private var state: State = .idle

    package init() {}

    package var pending: [PendingRequest] {
        switch state {
        case .idle: return []
        case let .waiting(pending, _): return pending
        }
    }

    package var deadline: Deadline? {
        switch state {
        case .idle: return nil
        case let .waiting(_, deadline): return deadline
        }
    }

    package var timers: [Watchdog] {
        guard let deadline else { return [] }
        return [Watchdog(kind: .softRefreshDeadline, requestId: nil, deadline: deadline)]
    }

    package func isPending(_ requestId: String) -> Bool {
        pending.contains { $0.requestId == requestId }
    }

    package func reason(of requestId: String) -> RefreshReason? {
        pending.first { $0.requestId == requestId }?.reason
    }

    /// H4, H5: emits `todayPage.refreshRequested` and joins the pending set.
    mutating func request(requestId: String, reason: RefreshReason?, at now: Instant, deadlineMs: Millis) -> [Effect] {
        let request = PendingRequest(requestId: requestId, reason: reason, requestedAtMs: now.ms)
        switch state {
        case .idle: state = .waiting(pending: [request], deadline: now.deadline(after: deadlineMs))
        case let .waiting(pending, deadline): state = .waiting(pending: pending + [request], deadline: deadline)
        }
        var payload: [(String, JSON)] = [
            ("type", "todayPage.refreshRequested"), ("schemaVersion", 1), ("requestId", .string(requestId)),
        ]
        if let reason { payload.append(("reason", .string(reason.rawValue))) }
        return [.emit(type: "todayPage.refreshRequested", requestId: requestId, payload: .object(payload), rule: reason.requestRule)]
    }

    /// H7: Web's result for a pending request consumes it, settled with Web's `outcome`; the
    /// deadline goes with the last one. Nothing when the id is not pending.
    mutating func resultArrived(for requestId: String, outcome: RequestOutcome) -> [Effect] {
        switch state {
        case .idle:
            return []
        case .waiting(var pending, let deadline):
            guard let index = pending.firstIndex(where: { $0.requestId == requestId }) else { return [] }
            let request = pending.remove(at: index)
            state = pending.isEmpty ? .idle : .waiting(pending: pending, deadline: deadline)
            return [Self.settled(request, outcome, .h7)]
        }
    }

    /// H6: the shared deadline passed: every pending request times out, in the order made.
    mutating func deadlinePassed() -> [Effect] {
        takeAll().map { Self.settled($0, .timedOut, .h6) }
    }

    /// H3, H18, H20: the document went (`rule`: a navigation, a termination, the teardown):
    /// every pending request is cancelled, in the order made, with the deadline.
    mutating func documentLeft(_ rule: Rule) -> [Effect] {
        takeAll().map { Self.settled($0, .cancelled, rule) }
    }

    private static func settled(_ request: PendingRequest, _ outcome: RequestOutcome, _ rule: Rule) -> Effect {
        .requestSettled(requestId: request.requestId, outcome: outcome, reason: request.reason, rule: rule)
    }

    private mutating func takeAll() -> [PendingRequest] {
        switch state {
        case .idle:
            return []
        case let .waiting(pending, _):
            state = .idle
            return pending
        }
    }
}

extension SoftRefresh {
    /// A stored set without a deadline, or a deadline without a set, cannot occur (the
    /// deadline comes and goes with the set); it reads as `idle`.
    init(_ snapshot: SessionSnapshot.Refresh) {
        if let deadline = snapshot.deadline, !snapshot.pending.isEmpty {
            state = .waiting(pending: snapshot.pending, deadline: deadline)
        }
    }

    var snapshot: SessionSnapshot.Refresh { SessionSnapshot.Refresh(pending: pending, deadline: deadline) }
}

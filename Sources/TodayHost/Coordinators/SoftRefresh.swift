/// Native soft requests waiting for Web's result and their shared deadline (H4–H7).
package struct SoftRefresh: Codable, Equatable, Sendable {
    package struct PendingRequest: Codable, Equatable, Sendable {
        package var requestId: String
        package var reason: RefreshReason?
        package var requestedAtMs: Millis
    }

    package private(set) var pending: [PendingRequest] = []
    /// Armed when a request joins an empty set; later requests share it (H5).
    package private(set) var deadline: Deadline?

    package init() {}

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
        if pending.isEmpty { deadline = now.deadline(after: deadlineMs) }
        pending.append(PendingRequest(requestId: requestId, reason: reason, requestedAtMs: now.ms))
        var payload: [(String, JSON)] = [
            ("type", "todayPage.refreshRequested"), ("schemaVersion", 1), ("requestId", .string(requestId)),
        ]
        if let reason { payload.append(("reason", .string(reason.rawValue))) }
        return [.emit(type: "todayPage.refreshRequested", requestId: requestId, payload: .object(payload), rule: reason.requestRule)]
    }

    /// H7: Web's result for a pending request consumes it, settled with Web's `outcome`; the
    /// deadline goes with the last one. Nothing when the id is not pending.
    mutating func resultArrived(for requestId: String, outcome: RequestOutcome) -> [Effect] {
        guard let index = pending.firstIndex(where: { $0.requestId == requestId }) else { return [] }
        let request = pending.remove(at: index)
        if pending.isEmpty { deadline = nil }
        return [Self.settled(request, outcome, .h7)]
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
        defer {
            pending = []
            deadline = nil
        }
        return pending
    }
}

extension SoftRefresh: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.array(pending) { writer, request in
            writer.string(request.requestId)
            writer.optional(request.reason) { $0.raw($1) }
            writer.int(request.requestedAtMs)
        }
        writer.optional(deadline) { $0.value($1) }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        pending = try reader.array { reader throws(StateDecodingError) in
            PendingRequest(requestId: try reader.string(),
                           reason: try reader.optional { reader throws(StateDecodingError) in try reader.raw() },
                           requestedAtMs: try reader.int64())
        }
        deadline = try reader.optional { reader throws(StateDecodingError) in try reader.value() }
    }
}

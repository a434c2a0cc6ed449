/// The one automatic reload allowed until re-armed (H9). It starts armed.
package struct RecoveryBudget: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `spent` when a native request fails or times out (the reload is made).
        case armed
        /// Next: `armed` on a `succeeded` result for a native-owned id, or a pull gesture.
        case spent
    }

    private var state: State = .armed

    package init() {}

    package var armed: Bool { state == .armed }

    /// H9: a pull gesture re-arms the budget.
    mutating func pullGestured() -> [Effect] {
        state = .armed
        return []
    }

    /// H7, H9: Web's result for a native-owned request: `succeeded` re-arms the budget, a
    /// failure spends it on a reload (`nativeRequestFailed`). Without a reload the result goes
    /// on to the spinner and header (`feedback`).
    mutating func nativeResult(_ status: ResultStatus, requestId: String) -> [Effect] {
        let feedback = Effect.feedbackSettled(requestId: requestId, status: status)
        switch status {
        case .succeeded:
            state = .armed
            return [feedback]
        case .failed, .cancelled, .unsupported:
            return nativeRequestFailed(cause: .recovery, requestId: nil, otherwise: [feedback])
        case .other:
            return [feedback]
        }
    }

    /// H9, H18: a native request failed, was cancelled or timed out (`cause` says how): the
    /// reload (under `requestId`, the caller's) while armed, else `otherwise`. Spent either way.
    mutating func nativeRequestFailed(cause: LoadCause, requestId: String?, otherwise: [Effect]) -> [Effect] {
        switch state {
        case .armed:
            state = .spent
            return [.reload(cause: cause, requestId: requestId)]
        case .spent:
            return otherwise
        }
    }
}

extension RecoveryBudget {
    init(_ snapshot: SessionSnapshot.Recovery) { state = snapshot.armed ? .armed : .spent }

    var snapshot: SessionSnapshot.Recovery { SessionSnapshot.Recovery(armed: armed) }
}

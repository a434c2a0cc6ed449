/// The one automatic reload allowed until re-armed (H9). It starts armed.
package struct RecoveryBudget: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `spent` when a native request fails or times out (the reload is made).
        case armed
        /// Next: `armed` on a `succeeded` result for a native-owned id, or a pull gesture.
        case spent
    }

    /// What a native request's failure leads to.
    package enum Recovery: Equatable, Sendable {
        /// The one automatic reload (H9); it spends the budget.
        case reload
        /// The budget is spent: no reload until it is re-armed.
        case none
    }

    package private(set) var state: State = .armed

    package init() {}

    package var armed: Bool { state == .armed }

    /// H9: a `succeeded` result for a native-owned id re-arms the budget.
    mutating func nativeRequestSucceeded() { state = .armed }

    /// H9: a pull gesture re-arms the budget.
    mutating func pullGestured() { state = .armed }

    /// H9: a native request failed, was cancelled or timed out: a reload while armed.
    mutating func nativeRequestFailed() -> Recovery {
        defer { state = .spent }
        return state == .armed ? .reload : .none
    }
}

/// As stored before `State` existed (`{"armed": true}`): rows written then still read.
extension RecoveryBudget: Codable {
    private enum CodingKeys: String, CodingKey { case armed }

    package init(from decoder: any Decoder) throws {
        state = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .armed) ? .armed : .spent
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(armed, forKey: .armed)
    }
}

extension RecoveryBudget: StateCodable {
    package func encode(to writer: inout StateWriter) { writer.bool(armed) }

    package init(from reader: inout StateReader) throws(StateDecodingError) { state = try reader.bool() ? .armed : .spent }
}

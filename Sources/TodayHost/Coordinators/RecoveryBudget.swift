/// The one automatic reload allowed until re-armed (H9). It starts armed.
public struct RecoveryBudget: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        /// Next: `spent` when a native request fails or times out (the reload is made).
        case armed
        /// Next: `armed` on a `succeeded` result for a native-owned id, or a pull gesture.
        case spent
    }

    /// What a native request's failure leads to.
    public enum Recovery: Equatable, Sendable {
        /// The one automatic reload (H9); it spends the budget.
        case reload
        /// The budget is spent: no reload until it is re-armed.
        case none
    }

    public private(set) var state: State = .armed

    public init() {}

    public var armed: Bool { state == .armed }

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

    public init(from decoder: any Decoder) throws {
        state = try decoder.container(keyedBy: CodingKeys.self).decode(Bool.self, forKey: .armed) ? .armed : .spent
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(armed, forKey: .armed)
    }
}

extension RecoveryBudget: StateCodable {
    public func encode(to writer: inout StateWriter) { writer.bool(armed) }

    public init(from reader: inout StateReader) throws(StateDecodingError) { state = try reader.bool() ? .armed : .spent }
}

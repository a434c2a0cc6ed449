/// The one automatic reload allowed until re-armed (H9). It starts armed.
public struct RecoveryBudget: Codable, Equatable, Sendable {
    public private(set) var armed = true

    public init() {}

    /// Re-armed only by a `succeeded` result for a native-owned id and by a pull gesture.
    mutating func rearm() { armed = true }

    /// Spends the budget; `true` when a reload may follow.
    mutating func spend() -> Bool {
        defer { armed = false }
        return armed
    }
}

extension RecoveryBudget: StateCodable {
    public func encode(to writer: inout StateWriter) { writer.bool(armed) }

    public init(from reader: inout StateReader) throws(StateDecodingError) { armed = try reader.bool() }
}

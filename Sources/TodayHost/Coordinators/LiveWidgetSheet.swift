/// The native Live Widget creation sheet (H26).
public struct LiveWidgetSheet: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable {
        /// Next: `presented` on `liveWidgetCreation.present` with the capability.
        case hidden
        /// Next: `hidden` on created, cancelled, account switch or teardown.
        case presented
    }

    public private(set) var state: State = .hidden

    public init() {}

    /// `true` when presentation started (the `{presented}` acknowledgement).
    mutating func present() -> Bool {
        switch state {
        case .presented: return false
        case .hidden:
            state = .presented
            return true
        }
    }

    /// Created or cancelled: `false` when no sheet was up.
    mutating func dismiss() -> Bool {
        switch state {
        case .hidden: return false
        case .presented:
            state = .hidden
            return true
        }
    }
}

extension LiveWidgetSheet: StateCodable {
    public func encode(to writer: inout StateWriter) { writer.raw(state) }

    public init(from reader: inout StateReader) throws(StateDecodingError) { state = try reader.raw() }
}

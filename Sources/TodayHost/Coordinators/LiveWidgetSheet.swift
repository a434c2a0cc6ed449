/// The native Live Widget creation sheet (H26).
package struct LiveWidgetSheet: Codable, Equatable, Sendable {
    package enum State: String, Codable, Sendable {
        /// Next: `presented` on `liveWidgetCreation.present` with the capability.
        case hidden
        /// Next: `hidden` on created, cancelled, account switch or teardown.
        case presented
    }

    package private(set) var state: State = .hidden

    package init() {}

    /// `true` when presentation started (the `{presented}` acknowledgement).
    mutating func present() -> Bool { move(to: .presented) }

    /// Created or cancelled: `false` when no sheet was up.
    mutating func dismiss() -> Bool { move(to: .hidden) }

    /// `false` when the sheet is already in `next`.
    private mutating func move(to next: State) -> Bool {
        guard state != next else { return false }
        state = next
        return true
    }
}

extension LiveWidgetSheet: StateCodable {
    package func encode(to writer: inout StateWriter) { writer.raw(state) }

    package init(from reader: inout StateReader) throws(StateDecodingError) { state = try reader.raw() }
}

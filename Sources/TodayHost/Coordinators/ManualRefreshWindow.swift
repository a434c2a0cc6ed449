/// The sliding window of repeated pull gestures (H10): a gesture within `manualRefreshWindowMs`
/// of the previous one reloads the document. Only gestures move it.
package struct ManualRefreshWindow: Codable, Equatable, Sendable {
    package private(set) var lastGestureAtMs: Millis?

    package init() {}

    /// Records a gesture and tells whether it repeats the previous one within the window.
    mutating func pullGesture(at now: Instant, windowMs: Millis) -> Bool {
        defer { lastGestureAtMs = now.ms }
        guard let lastGestureAtMs else { return false }
        return now.ms - lastGestureAtMs <= windowMs
    }
}

extension ManualRefreshWindow: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.optional(lastGestureAtMs) { $0.int($1) }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        lastGestureAtMs = try reader.optional { reader throws(StateDecodingError) in try reader.int64() }
    }
}

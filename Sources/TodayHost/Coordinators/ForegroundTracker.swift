/// Tracks foreground and background (H15) and decides whether a return deserves a request.
package struct ForegroundTracker: Codable, Equatable, Sendable {
    package enum State: Codable, Equatable, Sendable {
        /// Next: `background` on a background transition.
        case foreground
        /// Next: `foreground` on a return; the recorded time is cleared by it.
        case background(sinceMs: Millis)
    }

    package private(set) var state: State = .foreground

    package init() {}

    package var isForeground: Bool { state == .foreground }

    package var backgroundedAtMs: Millis? {
        if case let .background(sinceMs) = state { return sinceMs }
        return nil
    }

    /// H15: the app went to the background: the page is told it is hidden. Nothing when it
    /// already was (the input is then ignored).
    mutating func appBackgrounded(at now: Instant) -> [Effect] {
        guard case .foreground = state else { return [] }
        state = .background(sinceMs: now.ms)
        return Self.visibility(false)
    }

    package enum Return: Equatable, Sendable {
        case alreadyForeground
        /// Back from the background: the page is told it is visible (`shown`); `revalidate`
        /// when away at least the threshold.
        case returned(shown: [Effect], revalidate: Bool)
    }

    /// H15: the app came back to the foreground.
    mutating func appForegrounded(at now: Instant, thresholdMs: Millis) -> Return {
        switch state {
        case .foreground:
            return .alreadyForeground
        case let .background(sinceMs):
            state = .foreground
            return .returned(shown: Self.visibility(true), revalidate: now.ms - sinceMs >= thresholdMs)
        }
    }

    /// H15: leaving and disappearing are one step; so are the positive pair.
    static func visibility(_ visible: Bool) -> [Effect] {
        ["webView.visibilityWillChange", "webView.visibilityChanged"].map { type in
            .emit(type: type, requestId: nil,
                  payload: ["type": .string(type), "schemaVersion": 1, "visible": .bool(visible)], rule: .h15)
        }
    }
}

extension ForegroundTracker: StateCodable {
    package func encode(to writer: inout StateWriter) {
        switch state {
        case .foreground: writer.int(0)
        case let .background(sinceMs): writer.int(1); writer.int(sinceMs)
        }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        switch try reader.int() {
        case 0: state = .foreground
        case 1: state = .background(sinceMs: try reader.int64())
        default: throw reader.error("unknown app state")
        }
    }
}

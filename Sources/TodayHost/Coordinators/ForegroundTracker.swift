/// Tracks foreground and background (H15) and decides whether a return deserves a request.
public struct ForegroundTracker: Codable, Equatable, Sendable {
    public enum State: Codable, Equatable, Sendable {
        /// Next: `background` on a background transition.
        case foreground
        /// Next: `foreground` on a return; the recorded time is cleared by it.
        case background(sinceMs: Millis)
    }

    public private(set) var state: State = .foreground

    public init() {}

    public var isForeground: Bool { state == .foreground }

    public var backgroundedAtMs: Millis? {
        if case let .background(sinceMs) = state { return sinceMs }
        return nil
    }

    public enum Departure: Equatable, Sendable {
        /// Already in the background (the input is then ignored).
        case alreadyBackground
        /// Gone to the background now.
        case left
    }

    /// H15: the app went to the background.
    mutating func appBackgrounded(at now: Instant) -> Departure {
        switch state {
        case .background:
            return .alreadyBackground
        case .foreground:
            state = .background(sinceMs: now.ms)
            return .left
        }
    }

    public enum Return: Equatable, Sendable {
        case alreadyForeground
        /// Back from the background; `revalidate` when away at least the threshold.
        case returned(revalidate: Bool)
    }

    /// H15: the app came back to the foreground.
    mutating func appForegrounded(at now: Instant, thresholdMs: Millis) -> Return {
        switch state {
        case .foreground:
            return .alreadyForeground
        case let .background(sinceMs):
            state = .foreground
            return .returned(revalidate: now.ms - sinceMs >= thresholdMs)
        }
    }
}

extension ForegroundTracker: StateCodable {
    public func encode(to writer: inout StateWriter) {
        switch state {
        case .foreground: writer.int(0)
        case let .background(sinceMs): writer.int(1); writer.int(sinceMs)
        }
    }

    public init(from reader: inout StateReader) throws(StateDecodingError) {
        switch try reader.int() {
        case 0: state = .foreground
        case 1: state = .background(sinceMs: try reader.int64())
        default: throw reader.error("unknown app state")
        }
    }
}

/// Tracks foreground and background (H15) and whether a return deserves a request.
package struct ForegroundTracker: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `background` on a background transition.
        case foreground
        /// Next: `foreground` on a return; the recorded time is cleared by it.
        case background(sinceMs: Millis)
    }

    private var state: State = .foreground

    package init() {}

    package var isForeground: Bool { state == .foreground }

    package var backgroundedAtMs: Millis? {
        switch state {
        case .foreground: return nil
        case let .background(sinceMs): return sinceMs
        }
    }

    /// H15: the app went to the background: the page is told it is hidden, and the page view
    /// ends. Ignored when it already was.
    mutating func appBackgrounded(at now: Instant) -> [Effect] {
        switch state {
        case .foreground:
            state = .background(sinceMs: now.ms)
            return Self.visibility(false) + [.hostAnalytics(event: "page_end")]
        case .background:
            return [.ignored(.alreadyBackground)]
        }
    }

    /// H15: the app came back to the foreground: the page is told it is visible, a page view
    /// starts, and a soft request (under `requestId`, the caller's) follows when it was away at
    /// least `thresholdMs`. Ignored when it already was in the foreground.
    mutating func appForegrounded(at now: Instant, thresholdMs: Millis, requestId: String?) -> [Effect] {
        switch state {
        case .foreground:
            return [.ignored(.alreadyForeground)]
        case let .background(sinceMs):
            state = .foreground
            let revalidate: [Effect] = now.ms - sinceMs >= thresholdMs
                ? [.requestSoftRefresh(reason: .appForeground, requestId: requestId)] : []
            return Self.visibility(true) + [.hostAnalytics(event: "page_view")] + revalidate
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

extension ForegroundTracker {
    init(_ snapshot: SessionSnapshot.App) {
        switch snapshot.state {
        case .foreground: state = .foreground
        case let .background(sinceMs): state = .background(sinceMs: sinceMs)
        }
    }

    var snapshot: SessionSnapshot.App {
        switch state {
        case .foreground: return SessionSnapshot.App(state: .foreground)
        case let .background(sinceMs): return SessionSnapshot.App(state: .background(sinceMs: sinceMs))
        }
    }
}

/// The sliding window of repeated pull gestures (H10): a gesture within `manualRefreshWindowMs`
/// of the previous one reloads the document. Only gestures move it.
package struct ManualRefreshWindow: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `gestured` on a pull gesture.
        case noGesture
        /// Next: `gestured` at the next pull gesture's time.
        case gestured(atMs: Millis)
    }

    private var state: State = .noGesture

    package init() {}

    package var lastGestureAtMs: Millis? {
        switch state {
        case .noGesture: return nil
        case let .gestured(atMs): return atMs
        }
    }

    /// H10: a pull gesture (its id `requestId`) asks Web for a soft refresh, unless it repeats
    /// the previous one within the window or the document is dead: then it reloads at once.
    mutating func pullGesture(requestId: String, at now: Instant, windowMs: Millis, documentTerminated: Bool) -> [Effect] {
        let repeats: Bool
        switch state {
        case .noGesture: repeats = false
        case let .gestured(atMs): repeats = now.ms - atMs <= windowMs
        }
        state = .gestured(atMs: now.ms)
        if repeats || documentTerminated { return [.reload(cause: .manualRepeat, requestId: requestId)] }
        return [.requestSoftRefresh(reason: .userPull, requestId: requestId)]
    }
}

extension ManualRefreshWindow {
    init(_ snapshot: SessionSnapshot.ManualWindow) {
        if let atMs = snapshot.lastGestureAtMs { state = .gestured(atMs: atMs) }
    }

    var snapshot: SessionSnapshot.ManualWindow { SessionSnapshot.ManualWindow(lastGestureAtMs: lastGestureAtMs) }
}

/// The native loading overlay over the WebView (H23), one per document load.
package struct LoadingOverlay: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// Next: `hiddenByRender` on a render fact under the `render` gate, `released` on Web's
        /// release, `visible` on a new load.
        case visible
        /// Next: `released` on Web's release, `visible` on a new load.
        case hiddenByRender
        /// Hidden by `webView.loadingPresentation {owner: "web"}` for the rest of the load.
        /// Next: `visible` on a new load.
        case released
    }

    private var current = State.visible

    package init() {}

    package var state: OverlayState {
        switch current {
        case .visible: return .visible
        case .hiddenByRender, .released: return .hidden
        }
    }

    /// Whether this load already saw `webView.loadingPresentation {owner: "web"}`.
    package var releasedByWeb: Bool { current == .released }

    /// Every navigation shows the overlay again (H3).
    mutating func newLoad() -> [Effect] {
        switch current {
        case .visible: return []
        case .hiddenByRender, .released:
            current = .visible
            return [.overlay(from: .hidden, to: .visible)]
        }
    }

    /// `presentation` gate: the first release by Web hides it for the rest of the load.
    mutating func webReleased() -> [Effect] {
        switch current {
        case .visible:
            current = .released
            return [.overlay(from: .visible, to: .hidden)]
        case .hiddenByRender:
            current = .released
            return []
        case .released:
            return [.ignored(.alreadyReleased)]
        }
    }

    /// `render` gate: render facts hide it.
    mutating func hideForRender() -> [Effect] {
        switch current {
        case .visible:
            current = .hiddenByRender
            return [.overlay(from: .visible, to: .hidden)]
        case .hiddenByRender, .released:
            return []
        }
    }
}

extension LoadingOverlay {
    /// A stored `visible` overlay that Web released cannot occur (a release hides it); it reads
    /// as `visible`.
    init(_ snapshot: SessionSnapshot.Overlay) {
        switch (snapshot.state, snapshot.releasedByWeb) {
        case (.visible, _): current = .visible
        case (.hidden, false): current = .hiddenByRender
        case (.hidden, true): current = .released
        }
    }

    var snapshot: SessionSnapshot.Overlay {
        SessionSnapshot.Overlay(state: state, releasedByWeb: releasedByWeb)
    }
}

/// The native loading overlay over the WebView (H23), one per document load.
package struct LoadingOverlay: Codable, Equatable, Sendable {
    package private(set) var state: OverlayState = .visible
    /// Whether this load already saw `webView.loadingPresentation {owner: "web"}`.
    package private(set) var releasedByWeb = false

    package init() {}

    /// Every navigation shows the overlay again (H3).
    mutating func newLoad() -> [Effect] {
        releasedByWeb = false
        return set(.visible)
    }

    package enum Release: Equatable, Sendable {
        case hidden([Effect])
        case alreadyReleased
    }

    /// `presentation` gate: the first release by Web hides it for the rest of the load.
    mutating func webReleased() -> Release {
        guard !releasedByWeb else { return .alreadyReleased }
        releasedByWeb = true
        return .hidden(set(.hidden))
    }

    /// `render` gate: render facts hide it.
    mutating func hideForRender() -> [Effect] {
        set(.hidden)
    }

    private mutating func set(_ next: OverlayState) -> [Effect] {
        let from = state
        state = next
        return from == next ? [] : [.overlay(from: from, to: next)]
    }
}

extension LoadingOverlay: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.raw(state)
        writer.bool(releasedByWeb)
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        state = try reader.raw()
        releasedByWeb = try reader.bool()
    }
}

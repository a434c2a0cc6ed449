/// The native loading overlay over the WebView (H23), one per document load.
public struct LoadingOverlay: Codable, Equatable, Sendable {
    public private(set) var state: OverlayState = .visible
    /// Whether this load already saw `webView.loadingPresentation {owner: "web"}`.
    public private(set) var releasedByWeb = false

    public init() {}

    /// Every navigation shows the overlay again (H3).
    mutating func newLoad() -> [Effect] {
        releasedByWeb = false
        return set(.visible)
    }

    public enum Release: Equatable, Sendable {
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
    public func encode(to writer: inout StateWriter) {
        writer.raw(state)
        writer.bool(releasedByWeb)
    }

    public init(from reader: inout StateReader) throws(StateDecodingError) {
        state = try reader.raw()
        releasedByWeb = try reader.bool()
    }
}

/// The document in the WebView: what was loaded, why, and how far it got (H1–H3, H18, H22).
package struct DocumentLoader: Equatable, Sendable {
    /// One load: what was loaded and why.
    package struct Load: Equatable, Sendable {
        var loadId: Int
        var url: String
        /// The request id the URL carries (a hard reload made for a native request), if any.
        var requestId: String?
        /// Whether the document still owns `requestId`: until a result for it arrives or the
        /// document is replaced (H3).
        var awaitingResult: Bool
        var cause: LoadCause
    }

    /// What a load has shown (M5, M6).
    package struct Progress: Equatable, Sendable {
        /// This load rendered a batch (`firstBatchRendered`, or a non-empty `allBatchesRendered`).
        var renderedBatch: Bool
        /// This load showed its content: `firstBatchRendered` or `allBatchesRendered {empty: true}`
        /// (what a hard load's `succeeded` must follow, M5).
        var contentVisible: Bool

        static let none = Progress(renderedBatch: false, contentVisible: false)
    }

    package enum State: Equatable, Sendable {
        /// Nothing shown yet. Next: `rendered` on a render fact, `failed` on `loadFailed`,
        /// `terminated` when the Web process dies, `loading` again on a new load.
        case loading(Load)
        /// Next: `rendered` on a later render fact, `failed`, `terminated`, `loading` on a new load.
        case rendered(Load, Progress)
        /// Next: `rendered` on a render fact, `terminated`, `loading` on a new load.
        case failed(Load, Progress)
        /// Next: `rendered` or `failed` on a late render fact, `loading` on a new load (H18).
        case terminated(Load, Progress)
    }

    /// Before the first load (`HostSession.create` makes it at once).
    private var current = State.loading(Load(loadId: 0, url: "", requestId: nil, awaitingResult: false, cause: .initial))
    package private(set) var overlay = LoadingOverlay()

    package init() {}

    private var load: Load {
        switch current {
        case let .loading(load), let .rendered(load, _), let .failed(load, _), let .terminated(load, _): return load
        }
    }

    private var progress: Progress {
        switch current {
        case .loading: return .none
        case let .rendered(_, progress), let .failed(_, progress), let .terminated(_, progress): return progress
        }
    }

    package var loadId: Int { load.loadId }
    package var url: String { load.url }
    package var requestId: String? { load.requestId }
    package var awaitingResult: Bool { load.awaitingResult }
    package var cause: LoadCause { load.cause }
    package var renderedBatch: Bool { progress.renderedBatch }
    package var contentVisible: Bool { progress.contentVisible }

    package var state: DocumentState {
        switch current {
        case .loading: return .loading
        case .rendered: return .rendered
        case .failed: return .failed
        case .terminated: return .terminated
        }
    }

    /// The id a result may consume as this document's own (H3, H7).
    package var ownedRequestId: String? { awaitingResult ? requestId : nil }

    /// H3: a new load replaces the document and shows the overlay again.
    mutating func load(url: String, requestId: String?, cause: LoadCause) -> [Effect] {
        let loadId = load.loadId + 1
        current = .loading(Load(loadId: loadId, url: url, requestId: requestId, awaitingResult: requestId != nil, cause: cause))
        return [.navigation(loadId: loadId, url: url, cause: cause, requestId: requestId)] + overlay.newLoad()
    }

    /// The document's own request ended: Web's result for it (H7), or a navigation or the
    /// teardown cancelled it (`rule` H3, H20). Nothing when it owns none.
    mutating func ownRequestSettled(_ outcome: RequestOutcome, rule: Rule) -> [Effect] {
        guard let requestId = ownedRequestId else { return [] }
        var load = self.load
        load.awaitingResult = false
        switch current {
        case .loading: current = .loading(load)
        case let .rendered(_, progress): current = .rendered(load, progress)
        case let .failed(_, progress): current = .failed(load, progress)
        case let .terminated(_, progress): current = .terminated(load, progress)
        }
        return [.requestSettled(requestId: requestId, outcome: outcome, reason: nil, rule: rule)]
    }

    /// H22: the first batch is on screen; the `render` gate hides the overlay (H23).
    mutating func firstBatchRendered(gate: LoadingGate) -> [Effect] {
        rendered(Progress(renderedBatch: true, contentVisible: true), hides: gate == .render)
    }

    /// H22: every batch is on screen; an empty page shows its content (M5), and the `render`
    /// gate hides the overlay for it (H23).
    mutating func allBatchesRendered(empty: Bool, gate: LoadingGate) -> [Effect] {
        var progress = self.progress
        if empty { progress.contentVisible = true } else { progress.renderedBatch = true }
        return rendered(progress, hides: gate == .render && empty)
    }

    private mutating func rendered(_ progress: Progress, hides: Bool) -> [Effect] {
        switch current {
        case let .loading(load), let .rendered(load, _), let .failed(load, _), let .terminated(load, _):
            current = .rendered(load, progress)
        }
        return hides ? overlay.hideForRender() : []
    }

    /// H22: the load failed; the `render` gate hides the overlay (H23).
    mutating func loadFailed(gate: LoadingGate) -> [Effect] {
        switch current {
        case let .loading(load), let .rendered(load, _), let .failed(load, _), let .terminated(load, _):
            current = .failed(load, progress)
        }
        return gate == .render ? overlay.hideForRender() : []
    }

    /// H18: the Web content process died.
    mutating func terminated() -> [Effect] {
        switch current {
        case let .loading(load), let .rendered(load, _), let .failed(load, _), let .terminated(load, _):
            current = .terminated(load, progress)
        }
        return []
    }

    /// H23: `webView.loadingPresentation`: only Web's own release counts.
    mutating func loadingPresentation(owner: String) -> [Effect] {
        guard owner == "web" else { return [.ignored(.ownerNotWeb)] }
        return overlay.webReleased()
    }
}

extension DocumentLoader {
    init(_ snapshot: SessionSnapshot.Document) {
        let load = Load(loadId: snapshot.loadId, url: snapshot.url, requestId: snapshot.requestId,
                        awaitingResult: snapshot.awaitingResult, cause: snapshot.cause)
        let progress = Progress(renderedBatch: snapshot.renderedBatch, contentVisible: snapshot.contentVisible)
        switch snapshot.state {
        case .loading: current = .loading(load)
        case .rendered: current = .rendered(load, progress)
        case .failed: current = .failed(load, progress)
        case .terminated: current = .terminated(load, progress)
        }
        overlay = LoadingOverlay(snapshot.overlay)
    }

    var snapshot: SessionSnapshot.Document {
        SessionSnapshot.Document(loadId: loadId, url: url, requestId: requestId, awaitingResult: awaitingResult, state: state,
                                 cause: cause, renderedBatch: renderedBatch, contentVisible: contentVisible,
                                 overlay: overlay.snapshot)
    }
}

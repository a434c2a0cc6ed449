/// The document in the WebView: what was loaded, why, and how far it got (H1–H3, H18, H22).
package struct DocumentLoader: Codable, Equatable, Sendable {
    package private(set) var loadId: Int = 0
    package private(set) var url: String = ""
    /// The request id the URL carries (a hard reload made for a native request), if any.
    package private(set) var requestId: String?
    /// Whether the document still owns `requestId`: until a result for it arrives or the
    /// document is replaced (H3).
    package private(set) var awaitingResult = false
    package private(set) var state: DocumentState = .loading
    package private(set) var cause: LoadCause = .initial
    /// This load rendered a batch (`firstBatchRendered`, or a non-empty `allBatchesRendered`).
    package private(set) var renderedBatch = false
    /// This load showed its content: `firstBatchRendered` or `allBatchesRendered {empty: true}`
    /// (what a hard load's `succeeded` must follow, M5).
    package private(set) var contentVisible = false
    package var overlay = LoadingOverlay()

    package init() {}

    /// The id a result may consume as this document's own (H3, H7).
    package var ownedRequestId: String? { awaitingResult ? requestId : nil }

    /// H3: a new load replaces the document and shows the overlay again.
    mutating func load(url: String, requestId: String?, cause: LoadCause) -> [Effect] {
        loadId += 1
        self.url = url
        self.requestId = requestId
        awaitingResult = requestId != nil
        state = .loading
        self.cause = cause
        renderedBatch = false
        contentVisible = false
        return [.navigation(loadId: loadId, url: url, cause: cause, requestId: requestId)] + overlay.newLoad()
    }

    /// A result for the document's own id arrived, or teardown settled it (H20).
    mutating func resultArrived() {
        awaitingResult = false
    }

    mutating func firstBatchRendered() {
        state = .rendered
        renderedBatch = true
        contentVisible = true
    }

    mutating func allBatchesRendered(empty: Bool) {
        state = .rendered
        if empty { contentVisible = true } else { renderedBatch = true }
    }

    mutating func loadFailed() { state = .failed }

    mutating func terminated() { state = .terminated }
}

extension DocumentLoader: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.int(loadId)
        writer.string(url)
        writer.optional(requestId) { $0.string($1) }
        writer.bool(awaitingResult)
        writer.raw(state)
        writer.raw(cause)
        writer.bool(renderedBatch)
        writer.bool(contentVisible)
        writer.value(overlay)
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        loadId = try reader.int()
        url = try reader.string()
        requestId = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        awaitingResult = try reader.bool()
        state = try reader.raw()
        cause = try reader.raw()
        renderedBatch = try reader.bool()
        contentVisible = try reader.bool()
        overlay = try reader.value()
    }
}

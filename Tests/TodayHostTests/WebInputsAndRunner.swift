@testable import TodayHost

/// Builders for what Web sends, exactly as it would send it.
enum Web {
    static func started(_ requestId: String) -> Input {
        .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": .string(requestId),
                   "presentation": "header"])
    }

    static func result(_ requestId: String, _ status: String = "succeeded", mode: String = "soft") -> Input {
        .webEvent(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(requestId),
                   "mode": .string(mode), "status": .string(status)])
    }

    static func firstBatch(requestId: String? = nil) -> Input {
        var members: [(String, JSON)] = [("type", "todayPage.firstBatchRendered"), ("schemaVersion", 1),
                                         ("batchId", "b1"), ("elapsedMs", 120)]
        if let requestId { members.append(("requestId", .string(requestId))) }
        return .webEvent(.object(members))
    }

    static func allBatches(empty: Bool, requestId: String? = nil) -> Input {
        var members: [(String, JSON)] = [("type", "todayPage.allBatchesRendered"), ("schemaVersion", 1),
                                         ("status", "succeeded"), ("empty", .bool(empty)), ("elapsedMs", 300)]
        if let requestId { members.append(("requestId", .string(requestId))) }
        return .webEvent(.object(members))
    }

    static func loadFailed(requestId: String? = nil) -> Input {
        var members: [(String, JSON)] = [("type", "todayPage.loadFailed"), ("schemaVersion", 1),
                                         ("error", "network"), ("elapsedMs", 80)]
        if let requestId { members.append(("requestId", .string(requestId))) }
        return .webEvent(.object(members))
    }

    static func loadingPresentation(owner: String = "web", reason: String = "placeholders_visible") -> Input {
        .webEvent(["type": "webView.loadingPresentation", "owner": .string(owner), "reason": .string(reason)])
    }
}

extension SessionRunner {
    /// A session on `/embed/feeds/v1` with default timing, or as `configure` changes it.
    static func make(_ configure: (inout SessionConfig) -> Void = { _ in }) -> SessionRunner {
        var config = SessionConfig(uid: "u1")
        configure(&config)
        return try! SessionRunner(config: config)
    }

    var header: HeaderRenderer.Phase { session.header.phase }
    var headerId: String? { session.header.requestId }
    var pull: PullSpinner.Phase { session.pull.phase }
    var pullId: String? { session.pull.owner }
    var pending: [String] { session.refresh.pending.map(\.requestId) }
    var now: Millis { session.nowMs }

    /// The timeline entries of `kind` appended since `seq`.
    func entries(_ kind: TimelineEntry.Kind, after seq: Int = 0) -> [TimelineEntry] {
        timeline.filter { $0.kind == kind && $0.seq > seq }
    }

    /// Payloads Web received, in order.
    var emitted: [JSON] { entries(.emit).map { $0.data["payload"]! } }

    var refreshRequests: [JSON] { emitted.filter { $0["type"] == "todayPage.refreshRequested" } }

    var navigations: [TimelineEntry] { entries(.navigation) }

    /// `requestId → outcome` of every settled native request.
    var settled: [String: String] {
        Dictionary(entries(.request).map { ($0.requestId!, $0.data["outcome"]!.stringValue!) }, uniquingKeysWith: { $1 })
    }

    var lastSeq: Int { session.lastSeq }
}

extension Applied {
    var kinds: [TimelineEntry.Kind] { entries.map(\.kind) }
}

extension Web {
    /// A `refreshStarted` an old or broken Web might send: wrong schema, no presentation.
    static func malformedStarted(_ requestId: String) -> Input {
        .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 2, "requestId": .string(requestId)])
    }
}

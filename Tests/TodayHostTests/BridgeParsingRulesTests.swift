import Testing
@testable import TodayHost

/// Well-formed Web → native messages of H21's table, as Web sends them.
/// Shared with the session-level boundary tests.
enum WellFormed {
    static let refreshStarted: JSON = [
        "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "web-1", "presentation": "header",
    ]
    static let refreshResult: JSON = [
        "type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "r-1", "mode": "soft", "status": "succeeded",
    ]
    static let firstBatchRendered: JSON = [
        "type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": 120,
    ]
    static let allBatchesRendered: JSON = [
        "type": "todayPage.allBatchesRendered", "schemaVersion": 1, "status": "succeeded", "empty": false, "elapsedMs": 300,
    ]
    static let loadFailed: JSON = [
        "type": "todayPage.loadFailed", "schemaVersion": 1, "error": "network", "elapsedMs": 80,
    ]
    static let loadingPresentation: JSON = [
        "type": "webView.loadingPresentation", "owner": "web", "reason": "placeholders_visible",
    ]

    static func named(_ type: String) -> JSON {
        switch type {
        case "todayPage.refreshStarted": return refreshStarted
        case "todayPage.refreshResult": return refreshResult
        case "todayPage.firstBatchRendered": return firstBatchRendered
        case "todayPage.allBatchesRendered": return allBatchesRendered
        case "todayPage.loadFailed": return loadFailed
        case "webView.loadingPresentation": return loadingPresentation
        default: preconditionFailure("no well-formed \(type) in these tests")
        }
    }
}

extension JSON {
    /// The same object with `field` set to `value` (appended when new), or removed for `nil`.
    func withField(_ field: String, _ value: JSON?) -> JSON {
        guard case var .object(members) = self else { preconditionFailure("not an object") }
        if let index = members.firstIndex(where: { $0.0 == field }) {
            if let value { members[index].1 = value } else { members.remove(at: index) }
        } else if let value {
            members.append((field, value))
        }
        return .object(members)
    }
}

/// A host on `/embed/feeds/v1` with the default capabilities and the `presentation` gate.
let feedsHost = BridgeParser(
    capabilities: [Capability.revalidateFeedback, Capability.liveWidgetCreation], loadingGate: .presentation)

func parse(_ message: JSON, on parser: BridgeParser = feedsHost) -> BridgeParse {
    parser.parse(type: message["type"]!.stringValue!, message: message)
}

/// One way to break one field of a well-formed message; `value: nil` leaves the field out.
struct Breakage: Sendable, CustomTestStringConvertible {
    var type: String
    var field: String
    var value: JSON?

    init(_ type: String, _ field: String, _ value: JSON?) {
        self.type = type
        self.field = field
        self.value = value
    }

    var testDescription: String { "\(type) \(field) \(value.map { $0.serialized() } ?? "missing")" }
}

@Suite struct BridgeParserWellFormedTests {
    @Test func h21_refreshStartedParsesToItsRequestId() {
        #expect(parse(WellFormed.refreshStarted) == .event(.refreshStarted(requestId: "web-1")))
    }

    @Test func h21_refreshResultWithOnlyRequiredFields() {
        #expect(parse(WellFormed.refreshResult) == .event(.refreshResult(BridgeEvent.RefreshResult(
            requestId: "r-1", mode: .soft, status: .succeeded,
            loadId: nil, terminalEvent: nil, elapsedMs: nil, error: nil))))
    }

    @Test func h21_refreshResultWithEveryOptionalField() throws {
        let message = try JSON.parse("""
            {"type":"todayPage.refreshResult","schemaVersion":1,"requestId":"r-2","mode":"hard","status":"failed",
             "loadId":"web-load-7","terminalEvent":"firstBatchRendered","elapsedMs":12.5,
             "error":{"code":"timeout","message":"feed timed out"}}
            """)
        #expect(parse(message) == .event(.refreshResult(BridgeEvent.RefreshResult(
            requestId: "r-2", mode: .hard, status: .failed,
            loadId: "web-load-7", terminalEvent: "firstBatchRendered", elapsedMs: 12.5,
            error: ["code": "timeout", "message": "feed timed out"]))))
    }

    /// H7/H21: `status` is any string; the four known ones are typed, the rest kept as `.other`.
    @Test(arguments: [
        ("succeeded", ResultStatus.succeeded), ("failed", .failed), ("cancelled", .cancelled),
        ("unsupported", .unsupported), ("done", .other("done")), ("Succeeded", .other("Succeeded")), ("", .other("")),
    ])
    func h21_refreshResultAcceptsAnyStatusString(_ status: String, _ expected: ResultStatus) {
        let message = WellFormed.refreshResult.withField("status", .string(status))
        #expect(parse(message) == .event(.refreshResult(BridgeEvent.RefreshResult(
            requestId: "r-1", mode: .soft, status: expected,
            loadId: nil, terminalEvent: nil, elapsedMs: nil, error: nil))))
    }

    @Test func h21_firstBatchRendered() {
        #expect(parse(WellFormed.firstBatchRendered)
            == .event(.firstBatchRendered(batchId: "b1", elapsedMs: 120, requestId: nil)))
        #expect(parse(WellFormed.firstBatchRendered.withField("requestId", "r-1").withField("elapsedMs", .double(0.5)))
            == .event(.firstBatchRendered(batchId: "b1", elapsedMs: 0.5, requestId: "r-1")))
    }

    @Test func h21_allBatchesRendered() {
        #expect(parse(WellFormed.allBatchesRendered)
            == .event(.allBatchesRendered(status: .succeeded, empty: false, elapsedMs: 300, requestId: nil)))
        let partial = WellFormed.allBatchesRendered.withField("status", "partial").withField("empty", true).withField("requestId", "r-1")
        #expect(parse(partial) == .event(.allBatchesRendered(status: .partial, empty: true, elapsedMs: 300, requestId: "r-1")))
    }

    @Test func h21_loadFailed() {
        #expect(parse(WellFormed.loadFailed) == .event(.loadFailed(error: "network", elapsedMs: 80, requestId: nil)))
        #expect(parse(WellFormed.loadFailed.withField("requestId", "r-1"))
            == .event(.loadFailed(error: "network", elapsedMs: 80, requestId: "r-1")))
    }

    @Test func h21_loadingPresentation() {
        #expect(parse(WellFormed.loadingPresentation)
            == .event(.loadingPresentation(owner: "web", reason: "placeholders_visible")))
        #expect(parse(WellFormed.loadingPresentation.withField("reason", nil))
            == .event(.loadingPresentation(owner: "web", reason: nil)))
        // Who owns it is the session's business (ownerNotWeb, item 13), not the parser's.
        #expect(parse(WellFormed.loadingPresentation.withField("owner", "native"))
            == .event(.loadingPresentation(owner: "native", reason: "placeholders_visible")))
    }

    /// H21: `schemaVersion` is optional on non-`todayPage` events, and when present must be 1.
    @Test func h21_loadingPresentationSchemaVersionIsOptionalButOneWhenPresent() {
        let expected = BridgeParse.event(.loadingPresentation(owner: "web", reason: "placeholders_visible"))
        #expect(parse(WellFormed.loadingPresentation) == expected)
        #expect(parse(WellFormed.loadingPresentation.withField("schemaVersion", 1)) == expected)
        #expect(parse(WellFormed.loadingPresentation.withField("schemaVersion", .null)) == expected)
        guard case let .rejected(rejection) = parse(WellFormed.loadingPresentation.withField("schemaVersion", 2)) else {
            Issue.record("schemaVersion 2 must be rejected")
            return
        }
        #expect(rejection.field == "schemaVersion")
    }

    /// JavaScript has one number type: `1.0` is the number 1.
    @Test func h21_schemaVersionOneWrittenAsOnePointZeroIsOne() throws {
        let message = try JSON.parse(#"{"type":"todayPage.refreshStarted","schemaVersion":1.0,"requestId":"web-1","presentation":"header"}"#)
        #expect(parse(message) == .event(.refreshStarted(requestId: "web-1")))
    }

    @Test func h21_elapsedMsZeroIsInRange() {
        #expect(parse(WellFormed.loadFailed.withField("elapsedMs", 0)) == .event(.loadFailed(error: "network", elapsedMs: 0, requestId: nil)))
    }

    /// H21 (docs/RULES.md#h21): an optional field given as `null` counts as absent.
    @Test func h21_nullOptionalFieldsCountAsAbsent() {
        let result = WellFormed.refreshResult.withField("loadId", .null).withField("terminalEvent", .null)
            .withField("elapsedMs", .null).withField("error", .null)
        #expect(parse(result) == parse(WellFormed.refreshResult))
        #expect(parse(WellFormed.firstBatchRendered.withField("requestId", .null)) == parse(WellFormed.firstBatchRendered))
        #expect(parse(WellFormed.allBatchesRendered.withField("requestId", .null)) == parse(WellFormed.allBatchesRendered))
        #expect(parse(WellFormed.loadFailed.withField("requestId", .null)) == parse(WellFormed.loadFailed))
        #expect(parse(WellFormed.loadingPresentation.withField("reason", .null))
            == .event(.loadingPresentation(owner: "web", reason: nil)))
    }

    static let knownTypes = [
        "todayPage.refreshStarted", "todayPage.refreshResult", "todayPage.firstBatchRendered",
        "todayPage.allBatchesRendered", "todayPage.loadFailed", "webView.loadingPresentation",
    ]

    /// H21: unknown fields are ignored; the event is the same as without them.
    @Test(arguments: knownTypes)
    func h21_unknownFieldsAreIgnored(_ type: String) {
        let plain = parse(WellFormed.named(type))
        guard case .event = plain else {
            Issue.record("\(type) must parse: \(plain)")
            return
        }
        let extended = WellFormed.named(type)
            .withField("futureField", ["nested": [1, 2]])
            .withField("anotherOne", .null)
            .withField("x-debug", true)
        #expect(parse(extended) == plain)
    }
}

@Suite struct BridgeParserRejectionTests {
    static let breakages: [Breakage] = [
        // todayPage.refreshStarted: schemaVersion 1, requestId non-empty string, presentation "header"
        Breakage("todayPage.refreshStarted", "schemaVersion", nil),
        Breakage("todayPage.refreshStarted", "schemaVersion", 2),
        Breakage("todayPage.refreshStarted", "schemaVersion", 0),
        Breakage("todayPage.refreshStarted", "schemaVersion", "1"),
        Breakage("todayPage.refreshStarted", "schemaVersion", .null),
        Breakage("todayPage.refreshStarted", "requestId", nil),
        Breakage("todayPage.refreshStarted", "requestId", ""),
        Breakage("todayPage.refreshStarted", "requestId", 5),
        Breakage("todayPage.refreshStarted", "requestId", .null),
        Breakage("todayPage.refreshStarted", "presentation", nil),
        Breakage("todayPage.refreshStarted", "presentation", "toast"),
        Breakage("todayPage.refreshStarted", "presentation", "Header"),
        Breakage("todayPage.refreshStarted", "presentation", 1),
        // todayPage.refreshResult: schemaVersion 1, requestId, mode "hard"|"soft", status string; optionals typed
        Breakage("todayPage.refreshResult", "schemaVersion", nil),
        Breakage("todayPage.refreshResult", "schemaVersion", 2),
        Breakage("todayPage.refreshResult", "schemaVersion", "1"),
        Breakage("todayPage.refreshResult", "requestId", nil),
        Breakage("todayPage.refreshResult", "requestId", ""),
        Breakage("todayPage.refreshResult", "requestId", 7),
        Breakage("todayPage.refreshResult", "mode", nil),
        Breakage("todayPage.refreshResult", "mode", "medium"),
        Breakage("todayPage.refreshResult", "mode", "Soft"),
        Breakage("todayPage.refreshResult", "mode", 1),
        Breakage("todayPage.refreshResult", "status", nil),
        Breakage("todayPage.refreshResult", "status", 5),
        Breakage("todayPage.refreshResult", "status", true),
        Breakage("todayPage.refreshResult", "status", .null),
        Breakage("todayPage.refreshResult", "loadId", 5),
        Breakage("todayPage.refreshResult", "loadId", true),
        Breakage("todayPage.refreshResult", "terminalEvent", 5),
        Breakage("todayPage.refreshResult", "terminalEvent", ["x": 1]),
        Breakage("todayPage.refreshResult", "elapsedMs", -1),
        Breakage("todayPage.refreshResult", "elapsedMs", .double(-0.5)),
        Breakage("todayPage.refreshResult", "elapsedMs", "12"),
        Breakage("todayPage.refreshResult", "elapsedMs", true),
        Breakage("todayPage.refreshResult", "error", "boom"),
        Breakage("todayPage.refreshResult", "error", [1]),
        Breakage("todayPage.refreshResult", "error", 5),
        // todayPage.firstBatchRendered: schemaVersion 1, batchId non-empty string, elapsedMs >= 0, requestId? string
        Breakage("todayPage.firstBatchRendered", "schemaVersion", nil),
        Breakage("todayPage.firstBatchRendered", "schemaVersion", 2),
        Breakage("todayPage.firstBatchRendered", "batchId", nil),
        Breakage("todayPage.firstBatchRendered", "batchId", ""),
        Breakage("todayPage.firstBatchRendered", "batchId", 7),
        Breakage("todayPage.firstBatchRendered", "elapsedMs", nil),
        Breakage("todayPage.firstBatchRendered", "elapsedMs", -1),
        Breakage("todayPage.firstBatchRendered", "elapsedMs", "120"),
        Breakage("todayPage.firstBatchRendered", "elapsedMs", .null),
        Breakage("todayPage.firstBatchRendered", "requestId", 5),
        Breakage("todayPage.firstBatchRendered", "requestId", true),
        Breakage("todayPage.firstBatchRendered", "requestId", []),
        // todayPage.allBatchesRendered: schemaVersion 1, status "succeeded"|"partial", empty boolean, elapsedMs >= 0
        Breakage("todayPage.allBatchesRendered", "schemaVersion", nil),
        Breakage("todayPage.allBatchesRendered", "schemaVersion", 2),
        Breakage("todayPage.allBatchesRendered", "status", nil),
        Breakage("todayPage.allBatchesRendered", "status", "done"),
        Breakage("todayPage.allBatchesRendered", "status", "failed"),
        Breakage("todayPage.allBatchesRendered", "status", 1),
        Breakage("todayPage.allBatchesRendered", "empty", nil),
        Breakage("todayPage.allBatchesRendered", "empty", "x"),
        Breakage("todayPage.allBatchesRendered", "empty", ""),
        Breakage("todayPage.allBatchesRendered", "empty", "true"),
        Breakage("todayPage.allBatchesRendered", "empty", 0),
        Breakage("todayPage.allBatchesRendered", "empty", .null),
        Breakage("todayPage.allBatchesRendered", "elapsedMs", nil),
        Breakage("todayPage.allBatchesRendered", "elapsedMs", -1),
        Breakage("todayPage.allBatchesRendered", "elapsedMs", "300"),
        Breakage("todayPage.allBatchesRendered", "requestId", 3),
        // todayPage.loadFailed: schemaVersion 1, error string, elapsedMs >= 0, requestId?
        Breakage("todayPage.loadFailed", "schemaVersion", nil),
        Breakage("todayPage.loadFailed", "schemaVersion", 2),
        Breakage("todayPage.loadFailed", "error", nil),
        Breakage("todayPage.loadFailed", "error", 5),
        Breakage("todayPage.loadFailed", "error", ["code": "x"]),
        Breakage("todayPage.loadFailed", "error", .null),
        Breakage("todayPage.loadFailed", "elapsedMs", nil),
        Breakage("todayPage.loadFailed", "elapsedMs", -1),
        Breakage("todayPage.loadFailed", "elapsedMs", "80"),
        Breakage("todayPage.loadFailed", "requestId", 9),
        // webView.loadingPresentation: owner string, reason? string, schemaVersion? 1
        Breakage("webView.loadingPresentation", "owner", nil),
        Breakage("webView.loadingPresentation", "owner", 1),
        Breakage("webView.loadingPresentation", "owner", .null),
        Breakage("webView.loadingPresentation", "reason", 5),
        Breakage("webView.loadingPresentation", "reason", false),
        Breakage("webView.loadingPresentation", "schemaVersion", 2),
        Breakage("webView.loadingPresentation", "schemaVersion", 0),
        Breakage("webView.loadingPresentation", "schemaVersion", "1"),
    ]

    /// H21: a known event that breaks its shape is rejected, naming the field that broke.
    @Test(arguments: breakages)
    func h21_brokenFieldIsRejectedNamingTheField(_ breakage: Breakage) {
        let message = WellFormed.named(breakage.type).withField(breakage.field, breakage.value)
        guard case let .rejected(rejection) = parse(message) else {
            Issue.record("expected rejected, got \(parse(message)) for \(message.serialized())")
            return
        }
        #expect(rejection.field == breakage.field)
        #expect(!rejection.problem.isEmpty)
        #expect(rejection.reason.hasPrefix("\(breakage.field): "))
    }

    @Test func h21_rejectionSaysHowTheFieldBroke() {
        #expect(parse(WellFormed.refreshResult.withField("mode", "medium"))
            == .rejected(BridgeRejection(field: "mode", problem: #"must be "hard" or "soft", got "medium""#)))
        #expect(parse(WellFormed.refreshStarted.withField("presentation", "toast"))
            == .rejected(BridgeRejection(field: "presentation", problem: #"must be "header", got "toast""#)))
        #expect(parse(WellFormed.loadFailed.withField("elapsedMs", -1))
            == .rejected(BridgeRejection(field: "elapsedMs", problem: "must be >= 0")))
    }
}

@Suite struct BridgeParserIgnoredTests {
    /// H21: unknown event types are ignored, whatever they carry.
    @Test(arguments: ["todayPage.somethingNew", "foo.bar", "todaypage.refreshstarted", "TodayPage.refreshResult", "", "webView.somethingElse"])
    func h21_unknownTypesAreIgnored(_ type: String) {
        let message: JSON = ["type": .string(type), "schemaVersion": 99, "requestId": 5]
        #expect(feedsHost.parse(type: type, message: message) == .ignored(.unknownEvent))
    }
}

/// H21 at the session: a rejected event never reaches a coordinator, and the timeline says why.
@Suite struct BridgeBoundarySessionTests {
    /// Everything a coordinator could change is as it was; only `version` and the timeline moved.
    private func expectNothingReachedACoordinator(_ before: SessionRunner, _ after: SessionRunner,
                                                  _ applied: Applied, sourceLocation: SourceLocation = #_sourceLocation) {
        let (old, new) = (before.session, after.session)
        #expect(new.app == old.app, sourceLocation: sourceLocation)
        #expect(new.document == old.document, sourceLocation: sourceLocation)
        #expect(new.header == old.header, sourceLocation: sourceLocation)
        #expect(new.pull == old.pull, sourceLocation: sourceLocation)
        #expect(new.manualWindow == old.manualWindow, sourceLocation: sourceLocation)
        #expect(new.refresh == old.refresh, sourceLocation: sourceLocation)
        #expect(new.recovery == old.recovery, sourceLocation: sourceLocation)
        #expect(new.requestCounter == old.requestCounter, sourceLocation: sourceLocation)
        #expect(new.nowMs == old.nowMs, sourceLocation: sourceLocation)
        #expect(new.uid == old.uid && new.isClosed == old.isClosed, sourceLocation: sourceLocation)
        #expect(after.ledger == before.ledger, sourceLocation: sourceLocation)
        #expect(applied.ledgerWrites == [], sourceLocation: sourceLocation)
        #expect(new.version == old.version + 1, sourceLocation: sourceLocation)
        #expect(new.watchdogs == old.watchdogs, sourceLocation: sourceLocation)
        // An `input` and a `bridge` entry; a contract-monitor `violation` (M8) may follow, nothing else.
        #expect(applied.kinds.filter { $0 != .violation } == [.input, .bridge], sourceLocation: sourceLocation)
        // Every todayPage.* event resolves `undefined`.
        #expect(applied.resolution == .null, sourceLocation: sourceLocation)
    }

    @Test func h21_rejectedResultLeavesThePendingRequestAndSpinnerAlone() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "pull-1")))
        #expect(runner.pending == ["pull-1"])
        #expect(runner.pullId == "pull-1")
        let before = runner
        let message = WellFormed.refreshResult.withField("requestId", "pull-1").withField("mode", "medium")
        let applied = try runner.apply(.webEvent(message))

        expectNothingReachedACoordinator(before, runner, applied)
        #expect(runner.pending == ["pull-1"])
        #expect(runner.pull == before.pull)
        let reason = #"mode: must be "hard" or "soft", got "medium""#
        #expect(applied.outcome == .rejected(BridgeRejection(field: "mode", problem: #"must be "hard" or "soft", got "medium""#)))
        let bridge = try #require(applied.entries.first { $0.kind == .bridge })
        #expect(bridge.type == "todayPage.refreshResult")
        #expect(bridge.requestId == "pull-1")
        #expect(bridge.data == ["outcome": "rejected", "reason": .string(reason), "field": "mode"])
        let input = try #require(applied.entries.first)
        #expect(input.data == ["input": message, "outcome": "rejected", "reason": .string(reason), "via": "webEvent"])
    }

    @Test func h21_rejectedStartShowsNoHeaderAndRecordsNoWebMintedId() throws {
        var runner = SessionRunner.make()
        let before = runner
        let message = WellFormed.refreshStarted.withField("requestId", "web-9").withField("presentation", "toast")
        let applied = try runner.apply(.webEvent(message))

        expectNothingReachedACoordinator(before, runner, applied)
        #expect(runner.header == .hidden)
        #expect(runner.ledger.record(for: "web-9") == nil)
        let bridge = try #require(applied.entries.first { $0.kind == .bridge })
        #expect(bridge.data == ["outcome": "rejected", "reason": #"presentation: must be "header", got "toast""#,
                                "field": "presentation"])
        // The id was never seen: a caller may still use it (H4).
        try runner.apply(.lifecycle(.tabActivated(requestId: "web-9")))
        #expect(runner.pending == ["web-9"])
    }

    @Test func h21_rejectedRenderEventLeavesTheDocumentLoading() throws {
        var runner = SessionRunner.make { $0.loadingGate = .render }
        let before = runner
        let applied = try runner.apply(.webEvent(WellFormed.firstBatchRendered.withField("elapsedMs", -1)))

        expectNothingReachedACoordinator(before, runner, applied)
        #expect(runner.session.document.state == .loading)
        #expect(runner.session.document.overlay.state == .visible)
        let bridge = try #require(applied.entries.first { $0.kind == .bridge })
        #expect(bridge.data == ["outcome": "rejected", "reason": "elapsedMs: must be >= 0", "field": "elapsedMs"])
    }

    @Test func h21_rejectedLoadingPresentationLeavesTheOverlayUp() throws {
        var runner = SessionRunner.make()
        let before = runner
        let applied = try runner.apply(.webEvent(WellFormed.loadingPresentation.withField("owner", 1)))

        expectNothingReachedACoordinator(before, runner, applied)
        #expect(runner.session.document.overlay.state == .visible)
        let bridge = try #require(applied.entries.first { $0.kind == .bridge })
        #expect(bridge.data["outcome"] == "rejected")
        #expect(bridge.data["field"] == "owner")
        #expect(bridge.data["reason"]?.stringValue?.hasPrefix("owner: ") == true)
        // A well-formed release still works afterwards.
        try runner.apply(Web.loadingPresentation())
        #expect(runner.session.document.overlay.state == .hidden)
    }

    @Test func h21_unknownEventIsIgnoredWithItsReasonAndNoField() throws {
        var runner = SessionRunner.make()
        let applied = try runner.apply(.webEvent(["type": "todayPage.somethingNew", "requestId": "x"]))
        #expect(applied.outcome == .ignored(.unknownEvent))
        #expect(applied.resolution == .null)
        let bridge = try #require(applied.entries.first { $0.kind == .bridge })
        #expect(bridge.data == ["outcome": "ignored", "reason": "unknownEvent"])
    }

    /// H21: a body with no string `type` is not a bridge message: 400, and nothing changes.
    @Test(arguments: [
        JSON.object([("schemaVersion", 1), ("requestId", "r-1")]),
        ["type": 5],
        ["type": .null],
        ["type": ["todayPage.refreshResult"]],
        [:],
        ["todayPage.refreshResult"],
        "todayPage.refreshResult",
        .null,
    ] as [JSON])
    func h21_bodyWithoutStringTypeIsInvalid(_ body: JSON) {
        var runner = SessionRunner.make()
        let before = runner
        do {
            try runner.apply(.webEvent(body))
            Issue.record("\(body.serialized()) was accepted")
        } catch {
            guard case .invalidField("type", _) = error else {
                Issue.record("expected invalidField(type), got \(error)")
                return
            }
        }
        #expect(runner.session == before.session)
        #expect(runner.timeline == before.timeline)
    }

    @Test func h21_unknownEventTypesAreIgnoredAndResolveNull() throws {
        var runner = SessionRunner.make()
        for type in ["todayPage.somethingNew", "webView.somethingElse"] {
            let applied = try runner.apply(Web.message([("type", .string(type)), ("schemaVersion", 1)]))
            #expect(applied.outcome == .ignored(.unknownEvent), "\(type)")
            #expect(applied.resolution == .null)
            #expect(applied.trace == ["input:\(type)", "bridge:\(type)"])
            #expect(applied.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "unknownEvent"])
        }
        #expect(runner.session.version == 3)
    }

    @Test func h21_unknownFieldsAreIgnored() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let start = try runner.apply(Web.refreshStarted([("schemaVersion", 1), ("requestId", "h1"), ("presentation", "header"),
                                                         ("surface", "x"), ("extra", ["nested": true])]))
        #expect(start.outcome == .applied)
        #expect(runner.header == .refreshing)
        let result = try runner.apply(Web.refreshResult([("schemaVersion", 1), ("requestId", "t1"), ("mode", "soft"),
                                                         ("status", "succeeded"), ("cacheHit", true)]))
        #expect(result.outcome == .applied)
        #expect(runner.settled == ["t1": "succeeded"])
    }

    @Test func h21_aKnownEventBreakingItsShapeIsRejectedAndNeverReachesACoordinator() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let applied = try runner.apply(Web.refreshResult([("schemaVersion", 1), ("requestId", "t1"), ("mode", "medium"),
                                                          ("status", "succeeded")]))
        #expect(applied.outcome.name == "rejected")
        #expect(applied.resolution == .null)
        #expect(applied.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(applied.entries(.bridge)[0].data == ["outcome": "rejected", "reason": "mode: must be \"hard\" or \"soft\", got \"medium\"",
                                                     "field": "mode"])
        #expect(applied.entries(.input)[0].data["outcome"] == "rejected")
        #expect(runner.pending == ["t1"])
        #expect(runner.settled == [:])
        #expect(runner.timers == ["softRefreshDeadline(-)@5000"])
    }

    @Test func h21_everyShapeRuleOfTheTableRejectsWithTheFieldNamed() throws {
        let broken: [(type: String, members: [(String, JSON)], field: String)] = [
            ("todayPage.refreshResult", [("requestId", "t1"), ("mode", "soft"), ("status", "succeeded")], "schemaVersion"),
            ("todayPage.refreshResult", [("schemaVersion", 1), ("requestId", ""), ("mode", "soft"), ("status", "succeeded")], "requestId"),
            ("todayPage.refreshResult", [("schemaVersion", 1), ("requestId", "t1"), ("status", "succeeded")], "mode"),
            ("todayPage.refreshResult", [("schemaVersion", 1), ("requestId", "t1"), ("mode", "soft"), ("status", 3)], "status"),
            ("todayPage.refreshResult", [("schemaVersion", 1), ("requestId", "t1"), ("mode", "soft"), ("status", "failed"),
                                         ("elapsedMs", -1)], "elapsedMs"),
            ("todayPage.refreshResult", [("schemaVersion", 1), ("requestId", "t1"), ("mode", "soft"), ("status", "failed"),
                                         ("error", "boom")], "error"),
            ("todayPage.refreshResult", [("schemaVersion", 1), ("requestId", "t1"), ("mode", "soft"), ("status", "failed"),
                                         ("loadId", 5)], "loadId"),
            ("todayPage.firstBatchRendered", [("schemaVersion", 2), ("batchId", "b1"), ("elapsedMs", 1)], "schemaVersion"),
            ("todayPage.firstBatchRendered", [("schemaVersion", 1), ("batchId", ""), ("elapsedMs", 1)], "batchId"),
            ("todayPage.firstBatchRendered", [("schemaVersion", 1), ("batchId", "b1")], "elapsedMs"),
            ("todayPage.firstBatchRendered", [("schemaVersion", 1), ("batchId", "b1"), ("elapsedMs", 1), ("requestId", 5)], "requestId"),
            ("todayPage.allBatchesRendered", [("schemaVersion", 1), ("status", "done"), ("empty", false), ("elapsedMs", 1)], "status"),
            ("todayPage.allBatchesRendered", [("schemaVersion", 1), ("status", "partial"), ("empty", "no"), ("elapsedMs", 1)], "empty"),
            ("todayPage.allBatchesRendered", [("schemaVersion", 1), ("status", "partial"), ("empty", true), ("elapsedMs", -5)], "elapsedMs"),
            ("todayPage.loadFailed", [("schemaVersion", 1), ("elapsedMs", 1)], "error"),
            ("todayPage.loadFailed", [("schemaVersion", 1), ("error", "x"), ("elapsedMs", "1")], "elapsedMs"),
            ("webView.loadingPresentation", [("reason", "placeholders_visible")], "owner"),
            ("webView.loadingPresentation", [("owner", "web"), ("schemaVersion", 2)], "schemaVersion"),
            ("webView.loadingPresentation", [("owner", "web"), ("reason", 1)], "reason"),
        ]
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        for (type, members, field) in broken {
            let applied = try runner.apply(Web.message([("type", .string(type))] + members))
            #expect(applied.outcome.name == "rejected", "\(type) \(field)")
            #expect(applied.entries(.bridge)[0].data["field"] == .string(field), "\(type) \(field)")
            #expect(applied.resolution == .null)
        }
        #expect(runner.pending == ["t1"])
        #expect(runner.documentState == .loading)
        #expect(runner.overlay == .visible)
    }

    /// The table's other known events (`track`, `webView.navigationAction`, `liveWidgetCreation.present`,
    /// `nativeDialog.present`) are known too: a broken shape is `rejected`, not `unknownEvent`.
    @Test func h21_knownNonTodayPageEventsBreakingTheirShapeAreRejected() throws {
        let broken: [(type: String, members: [(String, JSON)], field: String)] = [
            ("track", [("event", "")], "event"),
            ("track", [("event", "card_tap"), ("properties", "x")], "properties"),
            ("track", [("event", "card_tap"), ("schemaVersion", 2)], "schemaVersion"),
            ("webView.navigationAction", [("url", 5)], "url"),
            ("liveWidgetCreation.present", [("schemaVersion", 2)], "schemaVersion"),
            ("nativeDialog.present", [("title", 1), ("actions", [["actionId": "a", "title": "A"]])], "title"),
            ("nativeDialog.present", [("title", "Delete?"), ("actions", [])], "actions"),
        ]
        var runner = SessionRunner.make { $0.route = "/embed/feeds/v1/edit" }
        for (type, members, field) in broken {
            let applied = try runner.apply(Web.message([("type", .string(type))] + members))
            #expect(applied.outcome.name == "rejected", "\(type) \(field)")
            #expect(applied.entries(.bridge)[0].data["field"] == .string(field), "\(type) \(field)")
        }
        let duplicateIds = try runner.apply(Web.message([("type", "nativeDialog.present"), ("title", "Delete?"),
                                                         ("actions", [["actionId": "a", "title": "A"], ["actionId": "a", "title": "B"]])]))
        #expect(duplicateIds.outcome.name == "rejected")
    }

    @Test func h21_optionalFieldsGivenAsNullCountAsAbsent() throws {
        var runner = SessionRunner.make()
        let render = try runner.apply(Web.message([("type", "todayPage.firstBatchRendered"), ("schemaVersion", 1),
                                                   ("batchId", "b1"), ("elapsedMs", 5), ("requestId", nil)]))
        #expect(render.outcome == .applied)
        #expect(runner.documentState == .rendered)
        let release = try runner.apply(Web.message([("type", "webView.loadingPresentation"), ("owner", "web"),
                                                    ("schemaVersion", nil), ("reason", nil)]))
        #expect(release.outcome == .applied)
        #expect(runner.overlay == .hidden)
    }

    @Test func h21_anyStatusStringIsAcceptedAndSettlesAsUnknown() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let result = try runner.apply(Web.result("t1", "partially-fresh"))
        #expect(result.outcome == .applied)
        #expect(runner.settled == ["t1": "unknown"])
        #expect(runner.loadId == 1)
    }

    @Test func h21_aBodyWithNoStringTypeIsNotABridgeMessage() throws {
        var runner = SessionRunner.make()
        let seq = runner.lastSeq
        for body: JSON in [["schemaVersion": 1], ["type": 5], ["type": nil], .array(["todayPage.refreshStarted"]), "todayPage.x"] {
            let refusal = runner.refused(.webEvent(body))
            let error = try #require(refusal)
            #expect(invalidField(error) == "type")
        }
        #expect(runner.lastSeq == seq)
        #expect(runner.session.version == 1)
    }
}

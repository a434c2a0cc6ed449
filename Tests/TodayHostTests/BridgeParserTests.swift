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
private let feedsHost = BridgeParser(
    capabilities: [Capability.revalidateFeedback, Capability.liveWidgetCreation], loadingGate: .presentation)

private func parse(_ message: JSON, on parser: BridgeParser = feedsHost) -> BridgeParse {
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

    static let hostsWithoutFeedback = [
        BridgeParser(capabilities: [], loadingGate: .presentation),
        BridgeParser(capabilities: [Capability.liveWidgetCreation, Capability.nativeDialog], loadingGate: .presentation),
        BridgeParser(capabilities: [], loadingGate: .render),
    ]

    /// H12, M2: without `today_page_revalidate_feedback.v1`, refreshStarted is unknown whatever its form.
    @Test(arguments: hostsWithoutFeedback)
    func h12_refreshStartedWithoutCapabilityIsIgnoredEvenWhenMalformed(_ host: BridgeParser) {
        let messages: [JSON] = [
            WellFormed.refreshStarted,
            WellFormed.refreshStarted.withField("schemaVersion", 2),
            WellFormed.refreshStarted.withField("requestId", nil),
            WellFormed.refreshStarted.withField("requestId", ""),
            WellFormed.refreshStarted.withField("presentation", "toast"),
            ["type": "todayPage.refreshStarted"],
        ]
        for message in messages {
            #expect(parse(message, on: host) == .ignored(.capabilityNotAdvertised), "\(message.serialized())")
        }
    }

    /// The capability gates only refreshStarted: results and render events still parse.
    @Test func h12_otherTodayPageEventsNeedNoCapability() {
        let oldBuild = BridgeParser(capabilities: [], loadingGate: .presentation)
        #expect(parse(WellFormed.refreshResult, on: oldBuild) == parse(WellFormed.refreshResult))
        #expect(parse(WellFormed.firstBatchRendered, on: oldBuild) == parse(WellFormed.firstBatchRendered))
        guard case .rejected = parse(WellFormed.refreshResult.withField("mode", "medium"), on: oldBuild) else {
            Issue.record("a malformed refreshResult is rejected on any host")
            return
        }
    }

    /// H23 (docs/RULES.md#h23): a `render`-gate host ignores webView.loadingPresentation; to it the
    /// event does not exist, whatever its form.
    @Test func h23_loadingPresentationOnRenderGateIsUnknownWhateverItsForm() {
        let renderHost = BridgeParser(capabilities: [Capability.revalidateFeedback], loadingGate: .render)
        let messages: [JSON] = [
            WellFormed.loadingPresentation,
            WellFormed.loadingPresentation.withField("owner", nil),
            WellFormed.loadingPresentation.withField("owner", 1),
            WellFormed.loadingPresentation.withField("schemaVersion", 2),
            ["type": "webView.loadingPresentation"],
        ]
        for message in messages {
            #expect(parse(message, on: renderHost) == .ignored(.unknownEvent), "\(message.serialized())")
        }
        // The render events it does use still parse there.
        #expect(parse(WellFormed.firstBatchRendered, on: renderHost)
            == .event(.firstBatchRendered(batchId: "b1", elapsedMs: 120, requestId: nil)))
    }
}

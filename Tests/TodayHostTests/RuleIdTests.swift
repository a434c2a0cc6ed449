import Testing
@testable import TodayHost

/// Issue 21, item 1: every entry a rule made names it (`rule`), given where the effect is
/// recorded. For each rule that makes entries, one scenario whose step makes them: the step's
/// entries of that kind and type carry exactly that id.
@Suite struct RuleIdTests {
    /// What a step must have made: entries of `kind` (and `type`, when given) carrying `rule`.
    struct Made: CustomStringConvertible {
        var kind: TimelineEntry.Kind
        var type: String?
        var rule: Rule
        var description: String { "\(kind) \(type ?? "*") → \(rule.rawValue)" }
    }

    struct Scenario: CustomStringConvertible, Sendable {
        var name: String
        var route = Route.feedsV1
        /// Brings the session to the moment before the step.
        var before: @Sendable (inout SessionRunner) throws -> Void = { _ in }
        var step: @Sendable (inout SessionRunner) throws -> Void
        var made: [Made]
        var description: String { name }
    }

    static func made(_ kind: TimelineEntry.Kind, _ type: String? = nil, _ rule: Rule) -> Made {
        Made(kind: kind, type: type, rule: rule)
    }

    static let requested = "todayPage.refreshRequested"

    static let scenarios: [Scenario] = [
        Scenario(name: "creation: the first load (H3) and its analytics (H24)", step: { _ in }, made: []),
        Scenario(name: "a pull asks Web and shows the spinner (H10)",
                 step: { try $0.apply(.gesture(.pull(requestId: "p1"))) },
                 made: [made(.emit, requested, .h10), made(.pull, "refreshing", .h10)]),
        Scenario(name: "a second pull within the window reloads (H10)",
                 before: { try $0.apply(.gesture(.pull(requestId: "p1"))) },
                 step: { try $0.apply(.gesture(.pull(requestId: "p2"))) },
                 made: [made(.navigation, "manualRepeat", .h10), made(.request, "cancelled", .h3)]),
        Scenario(name: "leaving and returning after the threshold (H15)",
                 before: { try $0.apply(.lifecycle(.background)); try $0.advance(by: 5000) },
                 step: { try $0.apply(.lifecycle(.foreground(requestId: "f1"))) },
                 made: [made(.emit, "webView.visibilityChanged", .h15), made(.emit, "webView.visibilityWillChange", .h15),
                        made(.emit, requested, .h15), made(.analytics, "page_view", .h24)]),
        Scenario(name: "a foreground input while in the foreground is ignored (H15)",
                 step: { try $0.apply(.lifecycle(.foreground(requestId: nil))) },
                 made: [made(.input, "foreground", .h15)]),
        Scenario(name: "a tab activation asks Web (H16)",
                 step: { try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))) },
                 made: [made(.emit, requested, .h16)]),
        Scenario(name: "a socket event asks Web silently (H16)",
                 step: { try $0.apply(.lifecycle(.socketEvent(requestId: "s1"))) },
                 made: [made(.emit, requested, .h16)]),
        Scenario(name: "a created live widget asks Web (H26)",
                 step: { try $0.apply(.gesture(.liveWidgetCreated(requestId: "w1"))) },
                 made: [made(.emit, requested, .h26)]),
        Scenario(name: "a cancelled creation with no sheet is ignored (H26)",
                 step: { try $0.apply(.gesture(.liveWidgetCancelled)) },
                 made: [made(.input, "liveWidget.cancelled", .h26)]),
        Scenario(name: "a command reaches Web (H28)",
                 step: { try $0.apply(.command(.scrollToSection(batchId: "b1", behavior: .smooth, highlight: true))) },
                 made: [made(.emit, "todayPage.scrollToSection", .h28)]),
        Scenario(name: "Web starts header feedback (H12)",
                 before: { try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))) },
                 step: { try $0.apply(Web.started("h1")) },
                 made: [made(.header, "refreshing", .h12)]),
        Scenario(name: "a start on a host without the capability is ignored (H12) and breaks M2",
                 route: Route.feedsV1Edit,
                 step: { try $0.apply(Web.started("h1")) },
                 made: [made(.bridge, "todayPage.refreshStarted", .h12), made(.violation, "M2", .m2)]),
        Scenario(name: "the header's own result settles it (H13) and answers its request (H7)",
                 before: { try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))); try $0.apply(Web.started("t1")) },
                 step: { try $0.apply(Web.result("t1")) },
                 made: [made(.header, "updated", .h13), made(.request, "succeeded", .h7)]),
        Scenario(name: "the settle time hides the header (H13)",
                 before: {
                     try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))); try $0.apply(Web.started("t1"))
                     try $0.apply(Web.result("t1"))
                 },
                 step: { try $0.advance(by: 1000) },
                 made: [made(.header, "hidden", .h13), made(.watchdog, "headerHide", .h13)]),
        Scenario(name: "a navigation clears the header (H14), cancels the request (H3) and loads (H17, H3)",
                 before: {
                     try $0.apply(Web.loadingPresentation())
                     try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))); try $0.apply(Web.started("t1"))
                 },
                 step: { try $0.apply(.lifecycle(.navigation(url: nil))) },
                 made: [made(.header, "hidden", .h14), made(.request, "cancelled", .h3), made(.navigation, "navigation", .h17),
                        made(.overlay, "visible", .h3)]),
        Scenario(name: "Web releasing the overlay hides it (H23)",
                 step: { try $0.apply(Web.loadingPresentation()) },
                 made: [made(.overlay, "hidden", .h23)]),
        Scenario(name: "a second release is ignored (H23)",
                 before: { try $0.apply(Web.loadingPresentation()) },
                 step: { try $0.apply(Web.loadingPresentation()) },
                 made: [made(.bridge, "webView.loadingPresentation", .h23)]),
        Scenario(name: "the deadline times the request out (H5, H6) and the first failure reloads (H9)",
                 before: { try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))) },
                 step: { try $0.advance(by: 5000) },
                 made: [made(.watchdog, "softRefreshDeadline", .h5), made(.request, "timedOut", .h6),
                        made(.navigation, "recovery", .h9), made(.violation, "M7", .m7)]),
        Scenario(name: "a deadline with the budget spent hides the header without a reload (H6)",
                 before: {
                     try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))); try $0.advance(by: 5000)
                     try $0.apply(.lifecycle(.tabActivated(requestId: "t2"))); try $0.apply(Web.started("t2"))
                 },
                 step: { try $0.advance(by: 5000) },
                 made: [made(.header, "hidden", .h6), made(.request, "timedOut", .h6)]),
        Scenario(name: "a terminated document cancels its requests and reloads (H18), the spinner follows (H11)",
                 before: { try $0.apply(.gesture(.pull(requestId: "p1"))) },
                 step: { try $0.apply(.lifecycle(.webContentTerminated(requestId: "r1"))) },
                 made: [made(.request, "cancelled", .h18), made(.navigation, "termination", .h18),
                        made(.pull, "refreshing", .h11)]),
        Scenario(name: "an account switch loads the new account (H19) and ends the spinner (H11)",
                 before: { try $0.apply(.gesture(.pull(requestId: "p1"))) },
                 step: { try $0.apply(.lifecycle(.accountSwitch(uid: "u2"))) },
                 made: [made(.navigation, "accountSwitch", .h19), made(.pull, "idle", .h11), made(.request, "cancelled", .h3)]),
        Scenario(name: "the pull watchdog ends the spinner (H11)",
                 // Unanswered, the request times out at 5 s and the reload carries the spinner (H11).
                 step: { try $0.apply(.gesture(.pull(requestId: "p1"))); try $0.advance(by: 12_000) },
                 made: [made(.watchdog, "pullWatchdog", .h11), made(.pull, "idle", .h11)]),
        Scenario(name: "teardown cancels what is open (H20)",
                 before: { try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))) },
                 step: { try $0.apply(.teardown) },
                 made: [made(.request, "cancelled", .h20), made(.analytics, "page_end", .h24)]),
        Scenario(name: "Web's analytics leave enriched (H24)",
                 step: { try $0.apply(.webEvent(["type": "track", "event": "tap"])) },
                 made: [made(.analytics, "tap", .h24)]),
        Scenario(name: "a chosen dialog action resolves the call (H27)", route: Route.feedsV1Edit,
                 before: { try $0.apply(Web.presentDeleteDialog) },
                 step: { try $0.apply(.gesture(.dialogChoose(actionId: "delete"))) },
                 made: [made(.resolution, "nativeDialog.present", .h27)]),
        Scenario(name: "a dialog gesture with no dialog is ignored (H27)",
                 step: { try $0.apply(.gesture(.dialogDismiss)) },
                 made: [made(.input, "dialog.dismiss", .h27)]),
        Scenario(name: "a malformed event is rejected (H21) and breaks M8",
                 step: { try $0.apply(.webEvent(["type": "todayPage.refreshStarted", "requestId": "x"])) },
                 made: [made(.bridge, "todayPage.refreshStarted", .h21), made(.violation, "M8", .m8)]),
        Scenario(name: "an unknown event is ignored (H21)",
                 step: { try $0.apply(.webEvent(["type": "todayPage.somethingNew"])) },
                 made: [made(.bridge, "todayPage.somethingNew", .h21)]),
        Scenario(name: "a result nobody waits for is stale (H8)",
                 step: { try $0.apply(Web.result("nobody")) },
                 made: [made(.bridge, "todayPage.refreshResult", .h8)]),
        Scenario(name: "a render for an earlier load is stale (H22)",
                 before: {
                     // A repeated pull reloads with p2 in the URL; the navigation after it replaces that load.
                     try $0.apply(.gesture(.pull(requestId: "p1"))); try $0.apply(.gesture(.pull(requestId: "p2")))
                     try $0.apply(.lifecycle(.navigation(url: nil)))
                 },
                 step: { try $0.apply(Web.firstBatch(requestId: "p2")) },
                 made: [made(.bridge, "todayPage.firstBatchRendered", .h22)]),
        Scenario(name: "an untrusted link is ignored (H25)",
                 step: { try $0.apply(Web.link("https://example.com/")) },
                 made: [made(.bridge, "webView.navigationAction", .h25)]),
        Scenario(name: "a clock move to the next timer with none is ignored (C2)",
                 step: { try $0.toNextTimer() },
                 made: [made(.input, "clock", .c2)]),
        Scenario(name: "a second result for one id breaks M1",
                 before: { try $0.apply(.lifecycle(.tabActivated(requestId: "t1"))); try $0.apply(Web.result("t1")) },
                 step: { try $0.apply(Web.result("t1")) },
                 made: [made(.violation, "M1", .m1), made(.bridge, "todayPage.refreshResult", .h8)]),
    ]

    @Test(arguments: scenarios)
    func everyEntryARuleMadeNamesIt(_ scenario: Scenario) throws {
        var runner = SessionRunner.make { $0.route = scenario.route }
        try scenario.before(&runner)
        let seq = runner.lastSeq
        try scenario.step(&runner)
        let made = runner.timeline.filter { $0.seq > seq }
        for expected in scenario.made {
            let matching = made.filter { $0.kind == expected.kind && (expected.type == nil || $0.type == expected.type) }
            #expect(!matching.isEmpty, "\(expected): the step made no such entry; it made \(made.map { "\($0.kind) \($0.type)" })")
            for entry in matching {
                #expect(entry.rule == expected.rule, "\(expected): entry #\(entry.seq) names \(entry.rule?.rawValue ?? "no rule")")
            }
        }
    }

    /// The creation's own entries: the first load and the overlay's initial state are H3, its
    /// analytics H24; the creation input names none (no rule judged it).
    @Test func theCreationsEntriesNameTheirRules() {
        let runner = SessionRunner.make()
        let rules = runner.timeline.map { "\($0.kind) \($0.type) \($0.rule?.rawValue ?? "-")" }
        #expect(rules == ["input create -", "navigation initial H3", "analytics app_sess_start H24", "analytics page_view H24"])
    }

    /// The JSON of an entry has `rule` only when a rule made it.
    @Test func ruleIsInTheJSONOnlyWhenThere() {
        let runner = SessionRunner.make()
        #expect(runner.timeline[0].json["rule"] == nil)
        #expect(runner.timeline[1].json["rule"] == "H3")
    }

    /// Every rule the output table names is made by some scenario here.
    @Test func everyOutputRuleHasAScenario() {
        let covered = Set(Self.scenarios.flatMap { $0.made.map(\.rule) } + [.h3, .h24])
        let outputRules: Set<Rule> = [.h3, .h5, .h6, .h7, .h9, .h10, .h11, .h12, .h13, .h14, .h15, .h16, .h17, .h18, .h19,
                                      .h20, .h23, .h24, .h26, .h27, .h28]
        #expect(outputRules.subtracting(covered).isEmpty, "no scenario for \(outputRules.subtracting(covered).map(\.rawValue).sorted())")
    }
}

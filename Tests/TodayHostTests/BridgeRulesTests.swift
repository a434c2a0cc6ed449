import Testing
@testable import TodayHost

/// H21–H23: the bridge boundary, render events and the native loading overlay.
@Suite struct BridgeRulesTests {
    // MARK: H21 Parsing

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

    // MARK: H22 Render events

    @Test func h22_renderEventsMakeTheDocumentRenderedOrFailed() throws {
        var runner = SessionRunner.make()
        let first = try runner.apply(Web.firstBatch())
        #expect(first.trace == ["input:todayPage.firstBatchRendered", "bridge:todayPage.firstBatchRendered"])
        #expect(runner.documentState == .rendered)
        try runner.apply(Web.loadFailed())
        #expect(runner.documentState == .failed)
        try runner.apply(Web.allBatches(empty: false))
        #expect(runner.documentState == .rendered)
    }

    @Test func h22_aRenderEventNamingAnEarlierLoadsURLIdIsStale() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(to: 1000)
        try runner.apply(.gesture(.pull(requestId: "p2")))
        try runner.advance(to: 2000)
        try runner.apply(.gesture(.pull(requestId: "p3")))
        #expect(runner.loadId == 3)
        #expect(runner.documentURL == "/embed/feeds/v1?language=en&uid=u1&requestId=p3")

        for stale in [Web.firstBatch(requestId: "p2"), Web.allBatches(empty: true, requestId: "p2"), Web.loadFailed(requestId: "p2")] {
            let applied = try runner.apply(stale)
            #expect(applied.outcome == .ignored(.staleRender))
            #expect(applied.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "staleRender"])
        }
        #expect(runner.documentState == .loading)

        try runner.apply(Web.firstBatch(requestId: "p3"))
        #expect(runner.documentState == .rendered)
    }

    @Test func h22_anyOtherRequestIdAppliesToTheCurrentLoad() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("w1"))
        #expect(try runner.apply(Web.loadFailed(requestId: "t1")).outcome == .applied)
        #expect(runner.documentState == .failed)
        #expect(try runner.apply(Web.firstBatch(requestId: "w1")).outcome == .applied)
        #expect(runner.documentState == .rendered)
        #expect(try runner.apply(Web.loadFailed(requestId: "nobody")).outcome == .applied)
        #expect(runner.documentState == .failed)
    }

    @Test func h22_renderEventsApplyToATerminatedDocument() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))
        #expect(runner.documentState == .terminated)
        #expect(try runner.apply(Web.firstBatch()).outcome == .applied)
        #expect(runner.documentState == .rendered)
    }

    // MARK: H23 Loading overlay

    @Test func h23_presentationGateHidesTheOverlayOnlyOnTheFirstWebRelease() throws {
        var runner = SessionRunner.make()
        #expect(runner.overlay == .visible)
        try runner.apply(Web.firstBatch())
        try runner.apply(Web.allBatches(empty: true))
        try runner.apply(Web.loadFailed())
        #expect(runner.overlay == .visible)
        #expect(runner.entries(.overlay) == [])

        let native = try runner.apply(Web.loadingPresentation(owner: "native"))
        #expect(native.outcome == .ignored(.ownerNotWeb))
        #expect(runner.overlay == .visible)

        let release = try runner.apply(Web.loadingPresentation(owner: "web", reason: "anything_at_all"))
        #expect(release.outcome == .applied)
        #expect(release.trace == ["input:webView.loadingPresentation", "bridge:webView.loadingPresentation", "overlay:hidden"])
        #expect(release.entries(.overlay)[0].data == ["from": "visible", "to": "hidden"])
        #expect(runner.overlay == .hidden)

        let again = try runner.apply(Web.loadingPresentation())
        #expect(again.outcome == .ignored(.alreadyReleased))
        #expect(again.trace == ["input:webView.loadingPresentation", "bridge:webView.loadingPresentation"])
        #expect(runner.overlay == .hidden)
    }

    @Test func h23_aNewLoadShowsTheOverlayAgainUntilWebReleasesIt() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        let navigation = try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(navigation.entries(.overlay).map(\.data) == [["from": "hidden", "to": "visible"]])
        #expect(runner.overlay == .visible)
        try runner.apply(Web.firstBatch())
        #expect(runner.overlay == .visible)
        #expect(try runner.apply(Web.loadingPresentation()).outcome == .applied)
        #expect(runner.overlay == .hidden)
    }

    @Test func h23_renderGateHidesTheOverlayOnRenderFacts() throws {
        var runner = SessionRunner.make { $0.loadingGate = .render }
        let release = try runner.apply(Web.loadingPresentation())
        #expect(release.outcome == .ignored(.unknownEvent))
        #expect(runner.overlay == .visible)
        try runner.apply(Web.allBatches(empty: false))
        #expect(runner.overlay == .visible)
        let empty = try runner.apply(Web.allBatches(empty: true))
        #expect(empty.trace == ["input:todayPage.allBatchesRendered", "bridge:todayPage.allBatchesRendered", "overlay:hidden"])
        #expect(runner.overlay == .hidden)

        try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(runner.overlay == .visible)
        try runner.apply(Web.firstBatch())
        #expect(runner.overlay == .hidden)

        try runner.apply(.lifecycle(.navigation(url: nil)))
        try runner.apply(Web.loadFailed())
        #expect(runner.overlay == .hidden)
    }
}

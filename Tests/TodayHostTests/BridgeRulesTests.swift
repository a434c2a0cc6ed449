import Testing
@testable import TodayHost

/// H21–H23: the bridge boundary, render events and the native loading overlay.
@Suite struct BridgeRulesTests {
    // MARK: H21 Parsing

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

import Testing
@testable import TodayHost

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
}

import Testing
@testable import TodayHost

/// The iOS guide's verification checklist (docs/RULES.md#checklist, items 1–9), each as a scenario run against the
/// host. Items about Web's behaviour check what the host does when Web behaves that way.
@Suite struct ChecklistScenarioTests {
    /// H4: the first server-made request id of session `s1` (`s1/request/1`, name-based UUID).
    static let firstServerId = "12551c98-30db-5119-8414-03b1ae7f7fe3"
    static let ownURL = "/embed/feeds/v1?language=en&uid=u1"

    // MARK: 1

    /// H4, H7, H13: Web that predates feedback answers a reasoned request with a plain result.
    @Test("Checklist 1 (H4, H7, H13): old Web answers a reasoned request with a plain result") func checklist1_oldWebAnswersReasonedRequestWithPlainResult() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 6000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))
        try runner.advance(to: 6500)
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw-1")))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "fg-1", "reason": "app_foreground"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "lw-1", "reason": "live_widget_created"],
        ])
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 11000)])

        try runner.advance(to: 6700)
        let first = try runner.apply(Web.result("fg-1"))
        #expect(first.outcome == .applied)
        #expect(first.kinds == [.input, .bridge, .request])
        #expect(first.entries.last?.data == ["outcome": "succeeded", "reason": "app_foreground"])
        #expect(runner.header == .hidden)

        try runner.advance(to: 7100)
        let second = try runner.apply(Web.result("lw-1"))
        #expect(second.kinds == [.input, .bridge, .request])
        #expect(second.entries.last?.data == ["outcome": "succeeded", "reason": "live_widget_created"])

        #expect(runner.requestTrail == ["fg-1 succeeded @6700", "lw-1 succeeded @7100"])
        #expect(runner.header == .hidden)
        #expect(runner.headerTrail == [])
        #expect(runner.pending == [])
        #expect(runner.dueTimers == [])
        #expect(runner.session.recovery.armed)
        #expect(try runner.toNextTimer().outcome == .ignored(.noTimer))
        #expect(runner.navigationTrail == ["initial \(Self.ownURL) @0"])
    }

    // MARK: 2

    /// H2, H12 (M2): a build that advertises nothing does not know `refreshStarted` at all.
    @Test("Checklist 2 (H2, H12, M2): a build without the capability ignores refreshStarted") func checklist2_oldNativeWithoutCapabilityIgnoresRefreshStarted() throws {
        var runner = SessionRunner.make { $0.capabilities = [] }
        #expect(runner.session.view["document"]?["injected"] == ["platform": "ios", "surface": "embedded", "capabilities": []])

        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 5000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))
        try runner.advance(to: 5200)

        let started = try runner.apply(Web.started("fg-1"))
        #expect(started.outcome == .ignored(.capabilityNotAdvertised))
        // The host ignores it; the contract monitor records Web's breach (M2).
        #expect(started.kinds == [.input, .bridge, .violation])
        #expect(started.entries[1].data == ["outcome": "ignored", "reason": "capabilityNotAdvertised"])
        #expect(started.entries[2].type == "M2")
        #expect(runner.header == .hidden)

        // Whatever its form: a malformed start is not rejected, it is unknown (H12).
        let malformed = try runner.apply(Web.malformedStarted("fg-1"))
        #expect(malformed.outcome == .ignored(.capabilityNotAdvertised))
        // A cached start is just as unknown.
        let cached = try runner.apply(Web.started("web-1"))
        #expect(cached.outcome == .ignored(.capabilityNotAdvertised))
        #expect(runner.header == .hidden)
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 10000)])

        try runner.advance(to: 5600)
        let result = try runner.apply(Web.result("fg-1"))
        #expect(result.kinds == [.input, .bridge, .request])
        #expect(runner.settled == ["fg-1": "succeeded"])
        #expect(runner.header == .hidden)
        #expect(runner.headerTrail == [])
        #expect(runner.dueTimers == [])
    }

    // MARK: 3

    /// H10, H11: a pull shows the spinner only, and only its own result ends it.
    @Test("Checklist 3 (H10, H11): a user pull shows only the spinner, ended by its own result") func checklist3_userPullShowsOnlySpinnerAndEndsOnMatchingResult() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.gesture(.pull(requestId: "pull-1")))
        #expect(runner.pull == .refreshing)
        #expect(runner.pullId == "pull-1")
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "pull-1", "reason": "user_pull"],
        ])
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 6000), Due(.pullWatchdog, "pull-1", 13000)])
        #expect(runner.header == .hidden)

        try runner.advance(to: 1500)
        try runner.apply(.lifecycle(.tabActivated(requestId: "tab-1")))
        try runner.advance(to: 2000)
        let other = try runner.apply(Web.result("tab-1"))
        #expect(other.kinds == [.input, .bridge, .request])
        #expect(runner.pull == .refreshing)
        #expect(runner.pullId == "pull-1")
        #expect(runner.header == .hidden)

        try runner.advance(to: 2500)
        let own = try runner.apply(Web.result("pull-1"))
        #expect(own.kinds == [.input, .bridge, .request, .pull])
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .succeeded)
        #expect(runner.pullTrail == ["refreshing pull-1 @1000", "idle pull-1 succeeded @2500"])
        #expect(runner.requestTrail == ["tab-1 succeeded @2000", "pull-1 succeeded @2500"])
        #expect(runner.header == .hidden)
        #expect(runner.headerTrail == [])
        #expect(runner.dueTimers == [])
    }

    // MARK: 4

    /// H15, H4, H12: under the threshold nothing is asked; at it, one `app_foreground` request
    /// whose start Web may show in the header.
    @Test("Checklist 4 (H15, H4, H12): back after 4 s nothing, after 5 s one request") func checklist4_foregroundAtFourSecondsDoesNothingAtFiveSendsOneRequest() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 4000)
        let early = try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))
        #expect(early.outcome == .applied)
        #expect(early.entries.map(\.type)
            == ["foreground", "webView.visibilityWillChange", "webView.visibilityChanged", "page_view"])
        #expect(runner.refreshRequests == [])
        #expect(runner.pending == [])
        #expect(runner.dueTimers == [])

        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 9000)
        // `fg-1` made no request at 4 s, so it is still unused (H4).
        let onTime = try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))
        #expect(onTime.entries.map(\.type) == [
            "foreground", "webView.visibilityWillChange", "webView.visibilityChanged", "page_view",
            "todayPage.refreshRequested",
        ])
        #expect(try runner.apply(.lifecycle(.foreground(requestId: nil))).outcome == .ignored(.alreadyForeground))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "fg-1", "reason": "app_foreground"],
        ])
        #expect(runner.pending == ["fg-1"])
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 14000)])

        try runner.advance(to: 9200)
        let started = try runner.apply(Web.started("fg-1"))
        #expect(started.outcome == .applied)
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "fg-1")
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 14000), Due(.headerWatchdog, "fg-1", 21200)])

        try runner.advance(to: 9700)
        try runner.apply(Web.result("fg-1"))
        #expect(runner.headerTrail == ["hidden→refreshing fg-1 @9200", "refreshing→updated fg-1 @9700"])
        #expect(runner.settled == ["fg-1": "succeeded"])
    }

    // MARK: 5

    /// H26, H12, H13: a created widget asks Web, Web starts the header, success shows `updated`
    /// for exactly `headerSettleMs`.
    @Test("Checklist 5 (H26, H12, H13): a created live widget shows refreshing, then updated for 1 s") func checklist5_liveWidgetCreatedShowsRefreshingThenUpdatedForOneSecond() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 2000)
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw-1")))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "lw-1", "reason": "live_widget_created"],
        ])

        try runner.advance(to: 2100)
        try runner.apply(Web.started("lw-1"))
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "lw-1")
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 7000), Due(.headerWatchdog, "lw-1", 14100)])

        try runner.advance(to: 2600)
        let result = try runner.apply(Web.result("lw-1"))
        #expect(result.kinds == [.input, .bridge, .request, .header])
        #expect(result.entries[2].data == ["outcome": "succeeded", "reason": "live_widget_created"])
        #expect(runner.header == .updated)
        #expect(runner.dueTimers == [Due(.headerHide, "lw-1", 3600)])

        try runner.advance(to: 3599)
        #expect(runner.header == .updated)
        let hide = try runner.advance(to: 3600)
        #expect(hide.kinds == [.input, .watchdog, .header])
        #expect(runner.header == .hidden)
        #expect(runner.headerTrail
            == ["hidden→refreshing lw-1 @2100", "refreshing→updated lw-1 @2600", "updated→hidden lw-1 @3600"])
        #expect(runner.dueTimers == [])
    }

    // MARK: 6

    /// H4, H16, H8: tab, timer and socket refreshes (and Web's own polling) never show feedback.
    @Test("Checklist 6 (H4, H16, H8): tab, timer, socket and polling refreshes show no feedback") func checklist6_tabTimerSocketAndPollingRefreshesShowNoFeedback() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "tab-1")))
        try runner.apply(.lifecycle(.timerTick(requestId: "timer-1")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "socket-1")))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "tab-1", "reason": "tab_activated"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "timer-1"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "socket-1"],
        ])
        try runner.advance(to: 1500)
        for requestId in ["tab-1", "timer-1", "socket-1"] {
            try runner.apply(Web.result(requestId))
        }
        #expect(runner.dueTimers == [])

        // Web polls once a minute on its own; a result for an id the host never made is stale.
        for minute: Millis in 1...3 {
            try runner.advance(to: minute * 60_000)
            let poll = try runner.apply(Web.result("poll-\(minute)"))
            #expect(poll.outcome == .ignored(.staleResult))
            try runner.apply(.lifecycle(.timerTick(requestId: nil)))
            #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, minute * 60_000 + 5000)])
            try runner.advance(by: 400)
            try runner.apply(Web.result(runner.pending[0]))
            #expect(runner.header == .hidden)
        }
        #expect(runner.refreshRequests.map { $0["reason"] }
            == [.string("tab_activated"), nil, nil, nil, nil, nil])
        #expect(runner.entries(.request).map(\.type) == Array(repeating: "succeeded", count: 6))
        #expect(runner.header == .hidden)
        #expect(runner.headerTrail == [])
        #expect(runner.dueTimers == [])
    }

    // MARK: 7

    /// H12, H13, H9, H4: a cached start names an id Web made up; the header owns it to its end.
    @Test("Checklist 7 (H12, H13, H9, H4): a cached start's Web-made id owns the header") func checklist7_cachedStartupAcceptsWebMintedRequestId() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 300)
        let started = try runner.apply(Web.started("web-generated-id"))
        #expect(started.outcome == .applied)
        #expect(started.kinds == [.input, .bridge, .header])
        #expect(runner.refreshRequests == [])
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "web-generated-id")
        #expect(runner.dueTimers == [Due(.headerWatchdog, "web-generated-id", 12300)])

        try runner.advance(to: 900)
        let result = try runner.apply(Web.result("web-generated-id"))
        #expect(result.outcome == .applied)
        #expect(result.kinds == [.input, .bridge, .header])
        #expect(runner.header == .updated)
        #expect(runner.dueTimers == [Due(.headerHide, "web-generated-id", 1900)])
        try runner.advance(to: 1900)
        #expect(runner.header == .hidden)
        #expect(runner.headerTrail == [
            "hidden→refreshing web-generated-id @300", "refreshing→updated web-generated-id @900",
            "updated→hidden web-generated-id @1900",
        ])
        #expect(runner.entries(.request) == [])

        // The id is now seen: a caller may not reuse it (H4).
        let reuse = #expect(throws: InputError.self) {
            try runner.apply(.gesture(.pull(requestId: "web-generated-id")))
        }
        if case let .invalidField(field, _)? = reuse {
            #expect(field == "requestId")
        } else {
            Issue.record("expected invalidField(requestId), got \(String(describing: reuse))")
        }

        // A failed cached revalidation is Web's own: `failed` for 1 s, no recovery reload (H9).
        try runner.advance(to: 5000)
        try runner.apply(Web.started("web-2"))
        try runner.advance(to: 5400)
        try runner.apply(Web.result("web-2", "failed"))
        #expect(runner.header == .failed)
        #expect(runner.dueTimers == [Due(.headerHide, "web-2", 6400)])
        try runner.advance(to: 6400)
        #expect(runner.header == .hidden)
        #expect(runner.navigationTrail == ["initial \(Self.ownURL) @0"])
        #expect(runner.session.recovery.armed)
        #expect(runner.dueTimers == [])
    }

    // MARK: 8

    /// H12, H13, H8: the newer start owns the header; the older request's result leaves it alone.
    @Test("Checklist 8 (H12, H13, H8): overlapping starts, the first request's stale result ignored") func checklist8_overlappingStartsIgnoreFirstRequestsStaleResult() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 6000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg-1")))
        try runner.advance(to: 6100)
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw-1")))
        try runner.advance(to: 6200)
        try runner.apply(Web.started("fg-1"))
        try runner.advance(to: 6300)
        try runner.apply(Web.started("lw-1"))
        #expect(runner.headerId == "lw-1")
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 11000), Due(.headerWatchdog, "lw-1", 18300)])

        try runner.advance(to: 6800)
        let stale = try runner.apply(Web.result("fg-1"))
        #expect(stale.kinds == [.input, .bridge, .request])
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "lw-1")
        #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 11000), Due(.headerWatchdog, "lw-1", 18300)])

        try runner.advance(to: 7000)
        try runner.apply(Web.result("lw-1"))
        #expect(runner.header == .updated)
        #expect(runner.dueTimers == [Due(.headerHide, "lw-1", 8000)])
        try runner.advance(to: 8000)
        #expect(runner.headerTrail == [
            "hidden→refreshing fg-1 @6200", "refreshing→refreshing lw-1 @6300", "refreshing→updated lw-1 @7000",
            "updated→hidden lw-1 @8000",
        ])
        #expect(runner.settled == ["fg-1": "succeeded", "lw-1": "succeeded"])

        // Two Web-minted starts; the older one's failure arrives after the newer one settled.
        try runner.advance(to: 9000)
        try runner.apply(Web.started("web-a"))
        try runner.advance(to: 9100)
        try runner.apply(Web.started("web-b"))
        try runner.advance(to: 9500)
        try runner.apply(Web.result("web-b"))
        try runner.advance(to: 9600)
        let late = try runner.apply(Web.result("web-a", "failed"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(late.kinds == [.input, .bridge])
        #expect(runner.header == .updated)
        #expect(runner.headerId == "web-b")
        #expect(runner.dueTimers == [Due(.headerHide, "web-b", 10500)])
        try runner.advance(to: 10500)
        #expect(runner.header == .hidden)
        #expect(runner.navigationTrail == ["initial \(Self.ownURL) @0"])
    }

    // MARK: 9

    /// A pull (`pull-1`, spinner) and a live widget request whose start Web showed (`lw-1`,
    /// header), both pending: deadline 6000, pull watchdog 13000, header watchdog 13200.
    static func bothSpinnersUp() throws -> SessionRunner {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.gesture(.pull(requestId: "pull-1")))
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw-1")))
        try runner.advance(to: 1200)
        try runner.apply(Web.started("lw-1"))
        #expect(runner.dueTimers == [
            Due(.softRefreshDeadline, nil, 6000), Due(.pullWatchdog, "pull-1", 13000), Due(.headerWatchdog, "lw-1", 13200),
        ])
        return runner
    }

    /// H6, H7, H9, H11, H13, H14, H17, H18: every way a request can end takes both UIs down.
    @Test("Checklist 9 (H6, H7, H9, H11, H13, H14, H17, H18): no path leaves either spinner stuck") func checklist9_noPathLeavesEitherSpinnerStuck() throws {
        let reload = Self.firstServerId

        // Failure: a recovery reload carries the spinner and clears the header; its own failure
        // (budget spent) ends the spinner. Then a header-owned failure shows `failed` for 1 s.
        do {
            var runner = try Self.bothSpinnersUp()
            try runner.advance(to: 2000)
            try runner.apply(Web.result("pull-1", "failed"))
            #expect(runner.navigationTrail.last == "recovery \(Self.ownURL)&requestId=\(reload) @2000")
            #expect(runner.header == .hidden)
            #expect(runner.pullId == reload)
            #expect(runner.dueTimers == [Due(.pullWatchdog, reload, 13000)])
            #expect(runner.settled == ["pull-1": "failed", "lw-1": "cancelled"])

            try runner.advance(to: 3000)
            try runner.apply(Web.result(reload, "failed", mode: "hard"))
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .failed)
            #expect(runner.dueTimers == [])
            #expect(runner.navigations.count == 2)
            #expect(runner.pullTrail == ["refreshing pull-1 @1000", "refreshing \(reload) @2000", "idle \(reload) failed @3000"])
            #expect(runner.headerTrail == ["hidden→refreshing lw-1 @1200", "refreshing→hidden lw-1 @2000"])

            try runner.advance(to: 4000)
            try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw-2")))
            try runner.apply(Web.started("lw-2"))
            try runner.advance(to: 4500)
            try runner.apply(Web.result("lw-2", "failed"))
            #expect(runner.header == .failed)
            #expect(runner.dueTimers == [Due(.headerHide, "lw-2", 5500)])
            try runner.advance(to: 5500)
            #expect(runner.header == .hidden)
            #expect(runner.dueTimers == [])
            #expect(runner.navigations.count == 2)
        }

        // Cancellation: `cancelled` counts as a failure (H7), so the first one reloads; the
        // reload's own `cancelled` ends the spinner.
        do {
            var runner = try Self.bothSpinnersUp()
            try runner.advance(to: 2000)
            try runner.apply(Web.result("lw-1", "cancelled"))
            #expect(runner.header == .hidden)
            #expect(runner.pullId == reload)
            #expect(runner.dueTimers == [Due(.pullWatchdog, reload, 13000)])
            #expect(runner.settled == ["lw-1": "cancelled", "pull-1": "cancelled"])

            try runner.advance(to: 2500)
            try runner.apply(Web.result(reload, "cancelled", mode: "hard"))
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .cancelled)
            #expect(runner.header == .hidden)
            #expect(runner.dueTimers == [])
        }

        // Timeout: the deadline reloads once, the spinner follows and its watchdog ends it.
        // With the budget spent, the next expiry hides the header at once; an unanswered
        // cached start is hidden by the header watchdog.
        do {
            var runner = try Self.bothSpinnersUp()
            try runner.advance(to: 6000)
            #expect(runner.settled == ["pull-1": "timedOut", "lw-1": "timedOut"])
            #expect(runner.navigationTrail.last == "recovery \(Self.ownURL)&requestId=\(reload) @6000")
            #expect(runner.header == .hidden)
            #expect(runner.pullId == reload)
            #expect(runner.dueTimers == [Due(.pullWatchdog, reload, 13000)])
            try runner.advance(to: 12999)
            #expect(runner.pull == .refreshing)
            try runner.advance(to: 13000)
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .timedOut)
            #expect(runner.dueTimers == [])

            try runner.advance(to: 14000)
            try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw-2")))
            try runner.apply(Web.started("lw-2"))
            #expect(runner.dueTimers == [Due(.softRefreshDeadline, nil, 19000), Due(.headerWatchdog, "lw-2", 26000)])
            try runner.advance(to: 19000)
            #expect(runner.header == .hidden)
            #expect(runner.settled["lw-2"] == "timedOut")
            #expect(runner.navigations.count == 2)
            #expect(runner.dueTimers == [])

            try runner.apply(Web.started("web-1"))
            try runner.advance(to: 30999)
            #expect(runner.header == .refreshing)
            try runner.advance(to: 31000)
            #expect(runner.header == .hidden)
            #expect(runner.headerTrail.last == "refreshing→hidden web-1 @31000")
            #expect(runner.dueTimers == [])
        }

        // Navigation not made by the host: everything pending is cancelled, both UIs end.
        do {
            var runner = try Self.bothSpinnersUp()
            try runner.advance(to: 2000)
            try runner.apply(.lifecycle(.navigation(url: nil)))
            #expect(runner.navigationTrail.last == "navigation \(Self.ownURL) @2000")
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .cancelled)
            #expect(runner.header == .hidden)
            #expect(runner.settled == ["pull-1": "cancelled", "lw-1": "cancelled"])
            #expect(runner.dueTimers == [])
            #expect(runner.session.recovery.armed)
            #expect(try runner.apply(Web.result("pull-1")).outcome == .ignored(.staleResult))
            #expect(try runner.apply(Web.result("lw-1")).outcome == .ignored(.staleResult))
            #expect(runner.pull == .idle)
            #expect(runner.header == .hidden)
        }

        // Web content termination: the termination reload carries the spinner; a second one,
        // budget spent, ends it and leaves the document terminated until a pull reloads it.
        do {
            var runner = try Self.bothSpinnersUp()
            try runner.advance(to: 2000)
            try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
            #expect(runner.header == .hidden)
            #expect(runner.settled == ["pull-1": "cancelled", "lw-1": "cancelled"])
            #expect(runner.navigationTrail.last == "termination \(Self.ownURL)&requestId=term-1 @2000")
            #expect(runner.pullId == "term-1")
            #expect(runner.dueTimers == [Due(.pullWatchdog, "term-1", 13000)])

            try runner.advance(to: 2500)
            try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .cancelled)
            #expect(runner.session.document.state == .terminated)
            #expect(runner.navigations.count == 2)
            #expect(runner.dueTimers == [])

            try runner.apply(.gesture(.pull(requestId: "pull-2")))
            #expect(runner.navigationTrail.last == "manualRepeat \(Self.ownURL)&requestId=pull-2 @2500")
            #expect(runner.dueTimers == [Due(.pullWatchdog, "pull-2", 14500)])
            try runner.advance(to: 14500)
            #expect(runner.pull == .idle)
            #expect(runner.session.pull.lastOutcome == .timedOut)
            #expect(runner.header == .hidden)
            #expect(runner.dueTimers == [])
        }
    }
}

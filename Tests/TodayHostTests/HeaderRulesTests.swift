import Testing
@testable import TodayHost

/// H12–H14: the native header renders what Web commands, correlated by `requestId`.
@Suite struct HeaderRulesTests {
    // MARK: H12 Start

    @Test func h12_startIsUnknownToAHostWithoutTheCapabilityWhateverItsForm() throws {
        var runner = SessionRunner.make { $0.capabilities = [] }
        let valid = try runner.apply(Web.started("h1"))
        #expect(valid.outcome == .ignored(.capabilityNotAdvertised))
        #expect(valid.resolution == .null)
        #expect(valid.trace == ["input:todayPage.refreshStarted", "bridge:todayPage.refreshStarted"])
        #expect(valid.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "capabilityNotAdvertised"])
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])

        // A start that a capable host would reject is still unknown here, not rejected.
        let malformed = try runner.apply(Web.refreshStarted([("schemaVersion", 2), ("requestId", ""), ("presentation", "toast")]))
        #expect(malformed.outcome == .ignored(.capabilityNotAdvertised))
        #expect(runner.header == .hidden)

        // A batch route advertises nothing by default (H2).
        var batchPage = SessionRunner.make { $0.route = "/embed/feed/v1/b42" }
        #expect(try batchPage.apply(Web.started("h1")).outcome == .ignored(.capabilityNotAdvertised))
        #expect(batchPage.header == .hidden)
    }

    @Test func h12_startIsRejectedUnlessSchemaVersion1NonEmptyRequestIdAndHeaderPresentation() throws {
        let broken: [(members: [(String, JSON)], field: String)] = [
            ([("requestId", "h1"), ("presentation", "header")], "schemaVersion"),
            ([("schemaVersion", 2), ("requestId", "h1"), ("presentation", "header")], "schemaVersion"),
            ([("schemaVersion", 1), ("presentation", "header")], "requestId"),
            ([("schemaVersion", 1), ("requestId", ""), ("presentation", "header")], "requestId"),
            ([("schemaVersion", 1), ("requestId", 7), ("presentation", "header")], "requestId"),
            ([("schemaVersion", 1), ("requestId", "h1")], "presentation"),
            ([("schemaVersion", 1), ("requestId", "h1"), ("presentation", "toast")], "presentation"),
        ]
        var runner = SessionRunner.make()
        for (members, field) in broken {
            let applied = try runner.apply(Web.refreshStarted(members))
            #expect(applied.outcome.name == "rejected", "\(field)")
            #expect(applied.resolution == .null)
            #expect(applied.entries(.bridge)[0].data["field"] == .string(field))
            #expect(applied.trace == ["input:todayPage.refreshStarted", "bridge:todayPage.refreshStarted"])
            #expect(runner.header == .hidden)
            #expect(runner.timers == [])
        }
    }

    @Test func h12_validStartShowsRefreshingAndArmsTheHeaderWatchdog() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 2000)
        let applied = try runner.apply(Web.started("h1"))
        #expect(applied.outcome == .applied)
        #expect(applied.resolution == .null)
        #expect(applied.trace == ["input:todayPage.refreshStarted", "bridge:todayPage.refreshStarted", "header:refreshing"])
        let entry = applied.entries(.header)[0]
        #expect(entry.requestId == "h1")
        #expect(entry.atMs == 2000)
        #expect(entry.data == ["from": "hidden", "to": "refreshing"])
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "h1")
        #expect(runner.timers == ["headerWatchdog(h1)@14000"])
        #expect(runner.session.view["header"] == ["state": "refreshing", "requestId": "h1"])
    }

    @Test func h12_startForAnotherIdReplacesTheActiveIdAndItsWatchdog() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 3000)
        let second = try runner.apply(Web.started("h2"))
        #expect(second.trace == ["input:todayPage.refreshStarted", "bridge:todayPage.refreshStarted", "header:refreshing"])
        #expect(second.entries(.header)[0].data == ["from": "refreshing", "to": "refreshing"])
        #expect(second.entries(.header)[0].requestId == "h2")
        #expect(runner.headerId == "h2")
        #expect(runner.timers == ["headerWatchdog(h2)@15000"])

        // The first start's watchdog is gone: 12000 passes with nothing firing.
        #expect(try runner.advance(to: 12000).trace == ["input:clock"])
        #expect(runner.header == .refreshing)
        #expect(try runner.advance(to: 15000).trace == ["input:clock", "watchdog:headerWatchdog", "header:hidden"])
    }

    @Test func h12_startCancelsAPendingHide() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.apply(Web.result("h1", "succeeded"))
        #expect(runner.header == .updated)
        #expect(runner.timers == ["headerHide(h1)@1000"])

        try runner.advance(to: 500)
        let start = try runner.apply(Web.started("h2"))
        #expect(start.entries(.header)[0].data == ["from": "updated", "to": "refreshing"])
        #expect(runner.timers == ["headerWatchdog(h2)@12500"])
        #expect(try runner.advance(to: 1000).trace == ["input:clock"])
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "h2")
    }

    @Test func h12_cachedStartWithNoNativeRequestIsOwnedUntilItsResult() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 100)
        try runner.apply(Web.started("web-1"))
        #expect(runner.pending == [])
        #expect(runner.header == .refreshing)

        // A Web-minted id's failure is Web's own: the header shows it, no recovery (docs/RULES.md#h9).
        let result = try runner.apply(Web.result("web-1", "failed"))
        #expect(result.outcome == .applied)
        #expect(result.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult", "header:failed"])
        #expect(runner.header == .failed)
        #expect(runner.headerId == "web-1")
        #expect(runner.timers == ["headerHide(web-1)@1100"])
        #expect(runner.loadId == 1)
        #expect(runner.recoveryArmed == true)
    }

    @Test func h12_startForTheShownIdRearmsItsWatchdogWithNoHeaderEntry() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 4000)
        let again = try runner.apply(Web.started("h1"))
        #expect(again.trace == ["input:todayPage.refreshStarted", "bridge:todayPage.refreshStarted"])
        #expect(runner.timers == ["headerWatchdog(h1)@16000"])
    }

    // MARK: H13 Settle

    @Test func h13_succeededShowsUpdatedForSettleThenHides() throws {
        var runner = SessionRunner.make()
        try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        try runner.apply(Web.started("fg-1"))
        try runner.advance(to: 6400)
        let result = try runner.apply(Web.result("fg-1", "succeeded"))
        #expect(result.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult",
                                 "request:succeeded", "header:updated"])
        #expect(result.entries(.header)[0].data == ["from": "refreshing", "to": "updated"])
        #expect(runner.header == .updated)
        #expect(runner.headerId == "fg-1")
        #expect(runner.timers == ["headerHide(fg-1)@7400"])

        #expect(try runner.advance(to: 7399).trace == ["input:clock"])
        #expect(runner.header == .updated)
        let hide = try runner.advance(to: 7400)
        #expect(hide.trace == ["input:clock", "watchdog:headerHide", "header:hidden"])
        #expect(hide.entries(.header)[0].atMs == 7400)
        #expect(hide.entries(.header)[0].data == ["from": "updated", "to": "hidden"])
        #expect(runner.header == .hidden)
        #expect(runner.headerId == nil)
        #expect(runner.timers == [])
    }

    @Test func h13_failedShowsFailedForSettleThenHidesWhenNoReloadFollows() throws {
        var runner = SessionRunner.make()
        // Spend the recovery budget so the failure below cannot reload (H9).
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        #expect(runner.recoveryArmed == false)
        try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        try runner.apply(Web.started("fg-1"))
        let result = try runner.apply(Web.result("fg-1", "failed"))
        #expect(result.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult",
                                 "request:failed", "header:failed"])
        #expect(runner.header == .failed)
        #expect(runner.loadId == 2)
        #expect(runner.timers == ["headerHide(fg-1)@7000"])

        #expect(try runner.advance(to: 6999).trace == ["input:clock"])
        #expect(runner.header == .failed)
        #expect(try runner.advance(to: 7000).trace == ["input:clock", "watchdog:headerHide", "header:hidden"])
        #expect(runner.header == .hidden)
    }

    @Test func h13_cancelledUnsupportedAndUnknownStatusesHideAtOnce() throws {
        var runner = SessionRunner.make()
        for (requestId, status) in [("w1", "cancelled"), ("w2", "unsupported"), ("w3", "later")] {
            try runner.apply(Web.started(requestId))
            let result = try runner.apply(Web.result(requestId, status))
            #expect(result.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult", "header:hidden"],
                    "\(status)")
            #expect(result.entries(.header)[0].data == ["from": "refreshing", "to": "hidden"])
            #expect(runner.header == .hidden)
            #expect(runner.timers == [])
        }
        #expect(runner.loadId == 1)
    }

    @Test func h13_resultsForOtherIdsLeaveTheHeaderAlone() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 2000)
        let result = try runner.apply(Web.result("t1", "succeeded"))
        #expect(result.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult", "request:succeeded"])
        #expect(runner.header == .refreshing)
        #expect(runner.headerId == "h1")
        #expect(runner.timers == ["headerWatchdog(h1)@12000"])
    }

    @Test func h13_headerWatchdogHidesNeverUpdated() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        #expect(try runner.advance(to: 11999).trace == ["input:clock"])
        #expect(runner.header == .refreshing)
        let fired = try runner.advance(to: 12000)
        #expect(fired.trace == ["input:clock", "watchdog:headerWatchdog", "header:hidden"])
        #expect(fired.entries(.header)[0].data == ["from": "refreshing", "to": "hidden"])
        #expect(runner.header == .hidden)

        // Its result arrives late: the header owns it no more (H8).
        let late = try runner.apply(Web.result("h1", "succeeded"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(runner.header == .hidden)
    }

    @Test func h13_resultForAStillPendingRequestAfterTheHeaderWatchdogShowsNothing() throws {
        var runner = SessionRunner.make { $0.timing.headerWatchdogMs = 3000 }
        try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        try runner.apply(Web.started("fg-1"))
        try runner.advance(to: 9000)
        #expect(runner.header == .hidden)
        #expect(runner.pending == ["fg-1"])

        let result = try runner.apply(Web.result("fg-1", "succeeded"))
        #expect(result.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult", "request:succeeded"])
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
    }

    // MARK: H14 Clear

    @Test func h14_navigationClearsTheHeaderAndCancelsItsHide() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.apply(Web.result("h1", "succeeded"))
        try runner.advance(to: 500)
        let navigation = try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(navigation.trace == ["input:navigation", "header:hidden", "navigation:navigation"])
        #expect(navigation.entries(.header)[0].data == ["from": "updated", "to": "hidden"])
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
        #expect(try runner.advance(to: 1000).trace == ["input:clock"])
    }

    @Test func h14_webContentTerminationClearsTheHeader() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 100)
        let terminated = try runner.apply(.lifecycle(.webContentTerminated(requestId: "term-1")))
        #expect(terminated.trace == ["input:webContentTerminated", "header:hidden", "navigation:termination"])
        #expect(terminated.entries(.header)[0].data == ["from": "refreshing", "to": "hidden"])
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
    }

    @Test func h14_accountSwitchClearsTheHeader() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.apply(Web.result("h1", "failed"))
        #expect(runner.header == .failed)
        let switched = try runner.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(switched.trace == ["input:accountSwitch", "analytics:page_end", "header:hidden",
                                   "navigation:accountSwitch", "analytics:page_view"])
        #expect(switched.entries(.header)[0].data == ["from": "failed", "to": "hidden"])
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
    }

    @Test func h14_teardownClearsTheHeader() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        let teardown = try runner.apply(.teardown)
        #expect(teardown.trace == ["input:teardown", "header:hidden", "analytics:page_end"])
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
    }

    @Test func h13_headerResultShowsUpdatedAtPlus999AndHiddenAtPlus1000() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 2000)
        try runner.apply(Web.result("h1", "succeeded"))
        #expect(runner.header == .updated)

        #expect(try runner.advance(by: 999).trace == ["input:clock"])
        #expect(runner.now == 2999)
        #expect(runner.header == .updated)
        #expect(runner.headerId == "h1")

        let edge = try runner.advance(by: 1)
        #expect(edge.trace == ["input:clock", "watchdog:headerHide", "header:hidden"])
        #expect(edge.entries(.header)[0].atMs == 3000)
        #expect(runner.header == .hidden)
    }
}

/// H12 at the bridge boundary: the capability `today_page_revalidate_feedback.v1` gates
/// `refreshStarted` and nothing else.
@Suite struct HeaderCapabilityParsingTests {
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
}

import Testing
@testable import TodayHost

/// H4–H9: native requests, the soft deadline, results and the recovery budget.
@Suite struct RefreshRulesTests {
    @Test func h4_requestIdsAreTheCallersOrDerivedFromSessionAndCounter() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
        try runner.apply(.lifecycle(.socketEvent(requestId: "mine")))
        try runner.apply(.lifecycle(.timerTick(requestId: nil)))
        let ids = runner.refreshRequests.map { $0["requestId"]!.stringValue! }
        #expect(ids == [
            RequestIdFactory.requestId(sessionId: "s1", counter: 1), "mine",
            RequestIdFactory.requestId(sessionId: "s1", counter: 2),
        ])
        // Replaying the same inputs yields the same ids.
        var replay = SessionRunner.make()
        try replay.apply(.lifecycle(.tabActivated(requestId: nil)))
        try replay.apply(.lifecycle(.socketEvent(requestId: "mine")))
        try replay.apply(.lifecycle(.timerTick(requestId: nil)))
        #expect(replay.timeline == runner.timeline)
    }

    @Test func h4_hostMadeReloadsDeriveTheirIdsToo() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.timerTick(requestId: "t1")))
        try runner.advance(by: 5000)
        let reloadId = RequestIdFactory.requestId(sessionId: "s1", counter: 1)
        #expect(runner.session.document.requestId == reloadId)
        #expect(runner.session.document.url == "/embed/feeds/v1?language=en&uid=u1&requestId=\(reloadId)")
    }

    @Test func h4_anIdSeenInAnyRoleIsInvalidAsACallersId() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(Web.started("web-1"))
        try runner.apply(.gesture(.pull(requestId: "p2")))  // a reload id
        let before = runner.session
        for used in ["p1", "p2", "web-1"] {
            #expect(throws: InputError.invalidField("requestId", "\(used) was already used by this session")) {
                try runner.apply(.lifecycle(.tabActivated(requestId: used)))
            }
        }
        #expect(throws: InputError.invalidField("requestId", "must be a non-empty string")) {
            try runner.apply(.gesture(.pull(requestId: "")))
        }
        #expect(runner.session == before)
    }

    @Test func h4_aCallersIdThatMadeNoRequestStaysUnused() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 1000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg")))  // under the threshold: no request
        #expect(runner.refreshRequests.isEmpty)
        try runner.apply(.lifecycle(.tabActivated(requestId: "fg")))
        #expect(runner.pending == ["fg"])
    }

    @Test func h4_reasonsBySourceAndSilentLegacyRequestsHaveNoReasonKey() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "a")))
        try runner.apply(.gesture(.liveWidgetCreated(requestId: "b")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "c")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "d")))
        try runner.apply(.lifecycle(.timerTick(requestId: "e")))
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 5000)
        try runner.apply(.lifecycle(.foreground(requestId: "f")))
        #expect(runner.refreshRequests == [
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "a", "reason": "user_pull"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "b", "reason": "live_widget_created"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "c", "reason": "tab_activated"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "d"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "e"],
            ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "f", "reason": "app_foreground"],
        ].map { $0 as JSON })
    }

    @Test func h5_requestsJoiningANonEmptySetShareTheDeadline() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        #expect(runner.session.refresh.deadline?.dueAtMs == 6000)
        try runner.advance(to: 4000)
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        #expect(runner.session.refresh.deadline?.dueAtMs == 6000)
        try runner.apply(Web.result("t1"))
        try runner.apply(Web.result("s1"))
        #expect(runner.session.refresh.deadline == nil)
        // An empty set arms a fresh deadline for the next request.
        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        #expect(runner.session.refresh.deadline?.dueAtMs == 9000)
    }

    @Test func h6_expiryTimesOutEveryPendingRequestThenReloadsOnce() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.timerTick(requestId: "t2")))
        let seq = runner.lastSeq
        try runner.advance(by: 5000)
        let entries = runner.timeline.filter { $0.seq > seq }
        // Each unanswered request is also a breach of Web's side (M7).
        #expect(entries.map(\.kind) == [.input, .watchdog, .request, .violation, .request, .violation, .navigation])
        #expect(runner.settled == ["t1": "timedOut", "t2": "timedOut"])
        #expect(entries[6].data["cause"] == "recovery")
        #expect(runner.session.recovery.armed == false)
    }

    @Test func h6_withoutABudgetOwnedUIsSettle() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r0")))  // spends the budget
        try runner.apply(Web.result("r0", "failed", mode: "hard"))  // budget spent: no reload
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 5000)
        try runner.apply(.lifecycle(.foreground(requestId: "fg")))
        try runner.apply(Web.started("fg"))
        try runner.advance(by: 5000)
        #expect(runner.settled["fg"] == "timedOut")
        #expect(runner.header == .hidden)
        #expect(runner.navigations.count == 2, "no reload after the expiry")
    }

    @Test func h7_resultConsumesItsRequestAndSettlesOwnedUIs() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        let applied = try runner.apply(Web.result("t1"))
        #expect(applied.entries.map(\.kind) == [.input, .bridge, .request, .header])
        #expect(applied.entries[2].data == ["outcome": "succeeded", "reason": "tab_activated"])
        #expect(runner.header == .updated)
        #expect(runner.pending.isEmpty)
        #expect(runner.session.refresh.deadline == nil)
        #expect(applied.resolution == .null)
    }

    @Test func h7_unknownStatusSettlesWithoutReloadOrRearm() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.webContentTerminated(requestId: "r0")))  // budget spent
        try runner.apply(.gesture(.pull(requestId: "p1")))  // re-arms
        try runner.apply(Web.result("p1", "skipped"))
        #expect(runner.session.pull.lastOutcome == .unknown)
        #expect(runner.settled["p1"] == "unknown")
        #expect(runner.navigations.count == 2)
        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))
        // The budget spent by the termination was re-armed by the pull, not by the odd status.
        #expect(runner.navigations.count == 3)
        #expect(runner.session.recovery.armed == false)
    }

    @Test func h8_staleResultsChangeNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        let before = runner.session
        let unknown = try runner.apply(Web.result("nobody-asked", "failed"))
        #expect(unknown.outcome == .ignored(.staleResult))
        #expect(unknown.entries.map(\.kind) == [.input, .bridge])
        try runner.apply(Web.result("t1"))
        let second = try runner.apply(Web.result("t1", "failed"))
        #expect(second.outcome == .ignored(.staleResult))
        #expect(runner.navigations.count == 1)
        #expect(runner.session.recovery == before.recovery)
    }

    @Test func h9_oneAutomaticReloadUntilRearmed() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.result("t1", "failed"))
        #expect(runner.navigations.last?.data["cause"] == "recovery")
        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        try runner.apply(Web.result("t2", "cancelled"))
        #expect(runner.navigations.count == 2, "budget spent: no second reload")
        try runner.apply(.lifecycle(.tabActivated(requestId: "t3")))
        try runner.apply(Web.result("t3", "succeeded"))  // re-arms
        try runner.apply(.lifecycle(.tabActivated(requestId: "t4")))
        try runner.apply(Web.result("t4", "unsupported"))
        #expect(runner.navigations.count == 3)
    }

    @Test func h9_webMintedResultsNeitherRearmNorRecover() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.started("cache-1"))
        try runner.apply(Web.result("cache-1", "failed"))
        #expect(runner.navigations.count == 1)
        #expect(runner.header == .failed)
        #expect(runner.session.recovery.armed)

        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))  // spends it
        try runner.apply(Web.started("cache-2"))
        try runner.apply(Web.result("cache-2", "succeeded"))
        #expect(runner.session.recovery.armed == false)
    }

    @Test func h9_headerShowsFailedOnlyWhenNoReloadFollows() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        let reloading = try runner.apply(Web.result("t1", "failed"))
        #expect(reloading.entries.filter { $0.kind == .header }.map(\.data) == [["from": "refreshing", "to": "hidden"]])
        #expect(runner.header == .hidden)

        try runner.apply(.lifecycle(.tabActivated(requestId: "t2")))
        try runner.apply(Web.started("t2"))
        try runner.apply(Web.result("t2", "failed"))
        #expect(runner.header == .failed)
    }

    @Test func h5_twoRequests3sApartShareOneDeadlineAtFirstPlus5000() throws {
        var runner = SessionRunner.make()
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        #expect(runner.timers == ["softRefreshDeadline(-)@6000"])
        try runner.advance(to: 4000)
        try runner.apply(.lifecycle(.socketEvent(requestId: "s2")))
        #expect(runner.timers == ["softRefreshDeadline(-)@6000"])
        #expect(runner.session.view["refresh"]?["deadlineAtMs"] == 6000)

        #expect(try runner.advance(to: 5999).trace == ["input:clock"])
        #expect(runner.pending == ["t1", "s2"])

        let expiry = try runner.advance(to: 6000)
        #expect(expiry.trace == ["input:clock", "watchdog:softRefreshDeadline", "request:timedOut", "request:timedOut",
                                 "navigation:recovery"])
        #expect(expiry.entries(.request).map(\.requestId) == ["t1", "s2"])
        #expect(expiry.entries(.request).map(\.atMs) == [6000, 6000])
        #expect(runner.pending == [])
    }

    @Test func h8_lateFailureAfterTheDeadlineIsStaleAndReloadsNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 5000)
        #expect(runner.settled["t1"] == "timedOut")
        let recoveryId = try #require(runner.session.document.requestId)
        #expect(runner.loadId == 2)
        // The recovery load answers: the budget is armed again (H9).
        try runner.advance(to: 5500)
        try runner.apply(Web.result(recoveryId, "succeeded", mode: "hard"))
        #expect(runner.recoveryArmed == true)

        try runner.advance(to: 6000)
        let late = try runner.apply(Web.result("t1", "failed"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(late.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(late.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "staleResult"])
        #expect(runner.loadId == 2)
        #expect(runner.recoveryArmed == true)
        #expect(runner.settled["t1"] == "timedOut")
    }

    @Test func h8_lateSuccessAfterTheDeadlineIsStaleAndDoesNotRearm() throws {
        var runner = SessionRunner.make()
        try runner.returnFromBackground(at: 6000, requestId: "fg-1")
        try runner.apply(Web.started("fg-1"))
        try runner.advance(to: 11000)
        #expect(runner.settled["fg-1"] == "timedOut")
        #expect(runner.recoveryArmed == false)
        #expect(runner.header == .hidden)

        let late = try runner.apply(Web.result("fg-1", "succeeded"))
        #expect(late.outcome == .ignored(.staleResult))
        #expect(late.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(runner.recoveryArmed == false)
        #expect(runner.header == .hidden)
        #expect(runner.timers == [])
    }

    @Test func h8_resultAfterANavigationIsStale() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.navigation(url: nil)))
        #expect(runner.settled == ["p1": "cancelled", "t1": "cancelled"])
        #expect(runner.loadId == 2)
        #expect(runner.recoveryArmed == true)

        try runner.advance(to: 2000)
        let failed = try runner.apply(Web.result("t1", "failed"))
        #expect(failed.outcome == .ignored(.staleResult))
        #expect(failed.trace == ["input:todayPage.refreshResult", "bridge:todayPage.refreshResult"])
        #expect(runner.loadId == 2)
        #expect(runner.recoveryArmed == true)

        let succeeded = try runner.apply(Web.result("p1", "succeeded"))
        #expect(succeeded.outcome == .ignored(.staleResult))
        #expect(runner.pull == .idle)
        #expect(runner.session.pull.lastOutcome == .cancelled)
        #expect(runner.settled == ["p1": "cancelled", "t1": "cancelled"])
    }

    @Test func h8_secondResultForTheSameIdIsStale() throws {
        var runner = SessionRunner.make()
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.result("t1", "succeeded"))
        let second = try runner.apply(Web.result("t1", "failed"))
        #expect(second.outcome == .ignored(.staleResult))
        #expect(runner.loadId == 1)
        #expect(runner.settled == ["t1": "succeeded"])
    }
}

/// H4: server-made request ids are name-based UUIDs (RFC 9562 version 5) of the session id and
/// a counter, so replaying the same inputs yields the same ids.
/// Expected values were computed with Python's `uuid.uuid5`, not with the code under test.
@Suite struct RequestIdTests {
    /// RFC 9562's DNS namespace, 6ba7b810-9dad-11d1-80b4-00c04fd430c8.
    static let dnsNamespace: [UInt8] = [
        0x6B, 0xA7, 0xB8, 0x10, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
    ]

    static let dnsVectors: [(name: String, uuid: String)] = [
        ("python.org", "886313e1-3b8a-5372-9b90-0c9aee199e5d"),
        ("www.example.com", "2ed6657d-e927-568b-95e1-2665a8aea6a2"),
        ("", "4ebd0208-8328-5d69-8c44-ec50939c0967"),
        ("é", "ebfe0af8-3997-5ade-b634-ba92cf69f557"),
        // 16-byte namespace + 39, 40, 48 and 200 bytes: around SHA-1's padding boundaries.
        (String(repeating: "a", count: 39), "5824f981-4282-59d4-9716-acb6d741350e"),
        (String(repeating: "a", count: 40), "39f39c20-db47-5131-8879-62f8f67f9014"),
        (String(repeating: "a", count: 48), "7280cc42-274a-5c4a-91fc-ae23f853eeb7"),
        (String(repeating: "a", count: 200), "fe30bfa6-ef90-59b3-b108-118411d0f0ab"),
    ]

    @Test func h4_uuidV5MatchesKnownVectorsInTheDNSNamespace() {
        for vector in Self.dnsVectors {
            #expect(RequestIdFactory.uuidV5(namespace: Self.dnsNamespace, name: vector.name) == vector.uuid,
                    "name of \(vector.name.utf8.count) bytes")
        }
    }

    @Test func h4_todaysimNamespaceIsTheFixedUUID() {
        #expect(RequestIdFactory.namespace == [
            0x6F, 0x1C, 0x2B, 0x9E, 0x53, 0x0A, 0x4D, 0x8B, 0x9C, 0x41, 0x7E, 0x25, 0xD3, 0x60, 0xB8, 0x17,
        ])
    }

    /// uuid.uuid5(UUID("6f1c2b9e-530a-4d8b-9c41-7e25d360b817"), "s1/request/1") and friends.
    @Test func h4_requestIdIsUUIDv5OfSessionAndCounterInTodaysimNamespace() {
        #expect(RequestIdFactory.uuidV5(name: "s1/request/1") == "12551c98-30db-5119-8414-03b1ae7f7fe3")
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 1) == "12551c98-30db-5119-8414-03b1ae7f7fe3")
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 2) == "e92b6d85-aa4b-5e3e-bc36-7bf06ef307fa")
        #expect(RequestIdFactory.requestId(sessionId: "s2", counter: 1) == "21403435-bd81-5639-b502-ccdfe0684aab")
    }

    @Test func h4_sameSessionAndCounterGiveTheSameId() {
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 7) == RequestIdFactory.requestId(sessionId: "s1", counter: 7))
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 7) != RequestIdFactory.requestId(sessionId: "s1", counter: 8))
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 7) != RequestIdFactory.requestId(sessionId: "s2", counter: 7))
        // No accidental collisions across the first thousand counters of a session.
        let ids = (1...1000).map { RequestIdFactory.requestId(sessionId: "s1", counter: $0) }
        #expect(Set(ids).count == 1000)
    }

    @Test func h4_idsAreLowercaseCanonicalVersion5Variant10() {
        let names = ["s1/request/1", "s1/request/2", "", "python.org"] + (1...50).map { "s9/request/\($0)" }
        for name in names {
            let id = RequestIdFactory.uuidV5(name: name)
            let groups = id.split(separator: "-", omittingEmptySubsequences: false)
            #expect(groups.map(\.count) == [8, 4, 4, 4, 12], "\(id)")
            #expect(id.allSatisfy { "0123456789abcdef-".contains($0) }, "\(id)")
            // Version nibble: the first of the third group is 5.
            #expect(groups.count == 5 && groups[2].first == "5", "\(id)")
            // Variant bits 10: the first of the fourth group is 8, 9, a or b.
            #expect(groups.count == 5 && groups[3].first.map { "89ab".contains($0) } == true, "\(id)")
        }
    }

    /// H4 through a session: server-made ids follow the counter, the same inputs give the same ids.
    @Test func h4_sessionsReplayingTheSameInputsMakeTheSameIds() throws {
        func play() throws -> [String] {
            var runner = SessionRunner.make()
            try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
            try runner.apply(.lifecycle(.socketEvent(requestId: nil)))
            return runner.pending
        }
        let first = try play()
        #expect(first == ["12551c98-30db-5119-8414-03b1ae7f7fe3", "e92b6d85-aa4b-5e3e-bc36-7bf06ef307fa"])
        #expect(try play() == first)
    }
}

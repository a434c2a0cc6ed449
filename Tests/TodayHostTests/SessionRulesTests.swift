import Testing
@testable import TodayHost

/// H1–H3: creation, capabilities, the document and navigation.
@Suite struct SessionRulesTests {
    @Test func h1_creationStartsForegroundLoadingBehindTheOverlay() throws {
        var config = SessionConfig(uid: "u1")
        config.analytics = AnalyticsBase(did: "d9", client_plat: "ios-17")
        let runner = try SessionRunner(config: config)
        let view = runner.session.view
        #expect(view["version"] == 1)
        #expect(view["language"] == "en")
        #expect(view["platform"] == "ios")
        #expect(view["route"] == "/embed/feeds/v1")
        #expect(view["loadingGate"] == "presentation")
        #expect(view["app"] == ["state": "foreground", "backgroundedAtMs": nil])
        #expect(view["document"]?["state"] == "loading")
        #expect(view["document"]?["cause"] == "initial")
        #expect(view["document"]?["overlay"] == "visible")
        #expect(view["document"]?["loadId"] == 1)
        // Initial activation requests no refresh.
        #expect(runner.refreshRequests.isEmpty)
        #expect(runner.session.watchdogs.isEmpty)
        // app_sess_start then page_view, with uid and only the base fields that are set.
        #expect(runner.entries(.analytics).map(\.data) == [
            ["event": "app_sess_start", "properties": ["uid": "u1", "did": "d9", "client_plat": "ios-17"]],
            ["event": "page_view", "properties": ["uid": "u1", "did": "d9", "client_plat": "ios-17"]],
        ])
    }

    /// `POST …/fork`: the fork is the whole session under another id. Forking it back under the
    /// source's id gives a value equal to the source in every field, so no field (a new one
    /// included) can be left out of a fork.
    @Test func aForkEqualsItsSourceButForTheId() throws {
        var runner = SessionRunner.make()
        _ = try runner.apply(.gesture(.pull(requestId: nil)))
        _ = try runner.apply(.lifecycle(.background))
        _ = try runner.advance(by: 6_000)
        _ = try runner.apply(.lifecycle(.foreground(requestId: nil)))
        _ = try runner.apply(Web.started("p-unknown"))
        let source = runner.session
        let fork = try source.forked(as: "fork-1")
        #expect(fork.id == "fork-1")
        #expect(fork != source)
        #expect(try fork.forked(as: source.id) == source)
        #expect(throws: InputError.self) { try source.forked(as: "not valid") }
    }

    @Test func h1_creationValidatesUidRouteAndId() {
        #expect(throws: InputError.invalidField("uid", "must be a non-empty string")) {
            try SessionRunner(config: SessionConfig(uid: ""))
        }
        var badRoute = SessionConfig(uid: "u1")
        badRoute.route = "/embed/other"
        #expect(throws: InputError.self) { try SessionRunner(config: badRoute) }
        #expect(throws: InputError.self) { try SessionRunner(id: "-starts-with-dash", config: SessionConfig(uid: "u1")) }
        #expect(throws: InputError.self) { try SessionRunner(id: String(repeating: "a", count: 65), config: SessionConfig(uid: "u1")) }
        #expect((try? SessionRunner(id: "A.b_c-9", config: SessionConfig(uid: "u1"))) != nil)
    }

    @Test func h1_languageIsPassedThroughUntouched() throws {
        let runner = SessionRunner.make { $0.language = "zh-HK" }
        #expect(runner.session.document.url == "/embed/feeds/v1?language=zh-HK&uid=u1")
    }

    @Test func h2_capabilitiesDefaultByRoute() throws {
        let expectations: [(String, [String])] = [
            ("/embed/feeds/v1", ["today_page_revalidate_feedback.v1", "live_widget_creation.v1"]),
            ("/embed/feeds/v3", ["today_page_revalidate_feedback.v1"]),
            ("/embed/feeds/v1/edit", ["native_dialog.v1"]),
            ("/embed/feed/v1/batch-42", []),
        ]
        for (route, capabilities) in expectations {
            let runner = SessionRunner.make { $0.route = route }
            #expect(runner.session.view["capabilities"] == .strings(capabilities), "\(route)")
            #expect(runner.session.view["document"]?["injected"] == [
                "platform": "ios", "surface": "embedded", "capabilities": .strings(capabilities),
            ])
        }
    }

    @Test func h2_explicitListReplacesTheDefaultAndEmptyModelsAnOldBuild() throws {
        let custom = SessionRunner.make {
            $0.capabilities = ["native_dialog.v1"]
            $0.platform = .android
        }
        #expect(custom.session.view["document"]?["injected"] == [
            "platform": "android", "surface": "embedded", "capabilities": ["native_dialog.v1"],
        ])
        var old = SessionRunner.make { $0.capabilities = [] }
        let started = try old.apply(Web.started("w1"))
        #expect(started.outcome == .ignored(.capabilityNotAdvertised))
        #expect(old.header == .hidden)
    }

    @Test func h3_documentUrlAndReloadRequestId() throws {
        var runner = SessionRunner.make { $0.uid = "user&1" }
        #expect(runner.session.document.url == "/embed/feeds/v1?language=en&uid=user%261")
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.advance(by: 1000)
        try runner.apply(.gesture(.pull(requestId: "p2")))
        #expect(runner.session.document.url == "/embed/feeds/v1?language=en&uid=user%261&requestId=p2")
        #expect(runner.session.view["document"]?["requestId"] == "p2")
        // The reload's id is owned by the document, not a pending soft request: no deadline.
        #expect(runner.pending.isEmpty)
        #expect(runner.session.watchdogs.map(\.kind) == [.pullWatchdog])
        // Its result consumes it as the document's own.
        let answered = try runner.apply(Web.result("p2", mode: "hard"))
        #expect(answered.outcome == .applied)
        #expect(runner.settled["p2"] == "succeeded")
        #expect(runner.session.document.awaitingResult == false)
        #expect(try runner.apply(Web.result("p2", mode: "hard")).outcome == .ignored(.staleResult))
    }

    @Test func h3_everyNavigationStartsANewLoadAndSweepsRequestsHeaderAndOverlay() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.loadingPresentation())
        #expect(runner.session.document.overlay.state == .hidden)
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(.lifecycle(.socketEvent(requestId: "s1")))
        try runner.apply(Web.started("t1"))
        let seq = runner.lastSeq
        try runner.apply(.lifecycle(.navigation(url: nil)))
        let entries = runner.timeline.filter { $0.seq > seq }
        #expect(entries.map(\.kind) == [.input, .request, .request, .header, .navigation, .overlay])
        #expect(entries[1].requestId == "t1" && entries[1].data == ["outcome": "cancelled", "reason": "tab_activated"])
        #expect(entries[2].requestId == "s1" && entries[2].data == ["outcome": "cancelled"])
        #expect(entries[4].data == ["loadId": 2, "url": "/embed/feeds/v1?language=en&uid=u1", "cause": "navigation"])
        #expect(entries[5].data == ["from": "hidden", "to": "visible"])
        #expect(runner.pending.isEmpty)
        #expect(runner.session.watchdogs.isEmpty)
        #expect(runner.header == .hidden)
        // The overlay is released again per load.
        #expect(try runner.apply(Web.loadingPresentation()).outcome == .applied)
    }

    @Test func h3_replacingADocumentCancelsTheReloadIdItOwned() throws {
        var runner = SessionRunner.make()
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.gesture(.pull(requestId: "p2")))  // repeat: reload owning p2
        try runner.apply(.lifecycle(.navigation(url: "/embed/feeds/v1?language=ja&uid=u1")))
        #expect(runner.settled == ["p1": "cancelled", "p2": "cancelled"])
        #expect(runner.session.document.url == "/embed/feeds/v1?language=ja&uid=u1")
        #expect(runner.session.document.requestId == nil)
        #expect(try runner.apply(Web.result("p2", mode: "hard")).outcome == .ignored(.staleResult))
    }
}

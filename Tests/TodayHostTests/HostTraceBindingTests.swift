import Foundation
import Testing
@testable import TodayHost

/// Issue 33, item 1: ids bind in line order (docs/TRACES.md, "Request ids"). The reproducer: two
/// live widgets created in one millisecond (H26), Web answering the second. Before, the answer's
/// input bound the second request's id at once, to the first replay request not yet bound — the
/// first one's — while the first request's line waited its turn: `unexpected` and `missing`.
@Suite struct HostTraceBindingTests {
    /// The session of the reproducer; `answerAfterMs`: how long Web takes to answer.
    static func twoLiveWidgets(answerAfterMs: Millis = 0) throws -> SessionRunner {
        var config = SessionConfig(uid: "alice")
        config.capabilities = [Capability.revalidateFeedback, Capability.liveWidgetCreation]
        var runner = try SessionRunner(id: "r1", config: config)
        try runner.advance(by: 1000)
        try runner.apply(.gesture(.liveWidgetCreated(requestId: nil)))
        let second = try runner.apply(.gesture(.liveWidgetCreated(requestId: nil)))
        let secondId = try #require(second.entries.first { $0.kind == .emit }?.requestId)
        if answerAfterMs > 0 { try runner.advance(by: answerAfterMs) }
        try runner.apply(Web.result(secondId, "failed"))
        try runner.advance(by: 6000)
        return runner
    }

    /// Every id the session's server made, upper-cased: a real host's own UUIDs.
    static func upperCasingIds(_ lines: [String], of runner: SessionRunner) -> [String] {
        let ids = Set(runner.timeline.compactMap(\.requestId)).filter { $0.count == 36 }
        return lines.map { line in ids.reduce(line) { $0.replacingOccurrences(of: $1, with: $1.uppercased()) } }
    }

    @Test(arguments: [0, 300] as [Millis])
    func twoRequestsInOneMillisecondAndAnAnswerToTheSecondConform(answerAfterMs: Millis) throws {
        let runner = try Self.twoLiveWidgets(answerAfterMs: answerAfterMs)
        #expect(runner.refreshRequests.count == 2, "two live_widget_created requests (H26)")
        let golden = HostTraceTests.trace(of: runner)
        for (name, lines) in [("golden", golden), ("upper-case UUIDs", Self.upperCasingIds(golden, of: runner))] {
            let verdict = try HostTraceTests.verify(lines)
            #expect(verdict.conforms, "\(name), answered after \(answerAfterMs) ms: \(verdict.divergences.map(\.detail))")
        }
    }

    /// A pull's spinner line names its id before the pull's request does (H10, H11): without
    /// `pull` and `header` in `recorded`, the ids still bind in line order.
    @Test func aRecordingWithoutPullAndHeaderLinesConforms() throws {
        var runner = try SessionRunner(id: "r2", config: SessionConfig(uid: "u1"))
        try runner.apply(.gesture(.pull(requestId: nil)))
        try runner.apply(.gesture(.pull(requestId: nil)))  // a repeated pull: the document reloads (H10)
        let reload = try #require(runner.navigations.last?.requestId)
        try runner.advance(by: 200)
        try runner.apply(Web.result(reload))
        try runner.advance(by: 13_000)
        let lines = HostTraceTests.trace(of: runner, recorded: ["emit", "navigation", "overlay"])
            .filter { !$0.contains(#""kind":"pull""#) && !$0.contains(#""kind":"header""#) }
        let verdict = try HostTraceTests.verify(lines)
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
    }

    /// Issue 34, item 5: a divergence shows the rules' output in the trace's ids, so expected and
    /// actual differ only where the host did (the dashboard marks the fields that differ). A
    /// host whose spinner ends `succeeded` where the pull timed out (H11): the outcome differs,
    /// the request id, the host's own upper-case UUID, does not.
    @Test func aDivergenceNamesTheExpectedOutputInTheTracesIds() throws {
        var runner = try SessionRunner(id: "r3", config: SessionConfig(uid: "u1"))
        try runner.apply(.gesture(.pull(requestId: nil)))
        try runner.advance(by: 13_000)
        let lines = Self.upperCasingIds(HostTraceTests.trace(of: runner), of: runner).map { line in
            line.contains(#""kind":"pull""#) ? line.replacingOccurrences(of: #""outcome":"timedOut""#, with: #""outcome":"succeeded""#) : line
        }
        let verdict = try HostTraceTests.verify(lines)
        let different = try #require(verdict.divergences.first { $0.problem == .different }, "\(verdict.divergences.map(\.detail))")
        #expect(different.rule == .h11)
        let hostId = try #require(different.actual?["requestId"]?.stringValue)
        #expect(hostId == hostId.uppercased() && hostId.count == 36)
        #expect(different.expected?["requestId"]?.stringValue == hostId)
        #expect(different.expected?["data"]?["outcome"] == .string("timedOut"))
        #expect(different.actual?["data"]?["outcome"] == .string("succeeded"))
    }

    /// Issue 44, item 7: a Web event names the id a tab activation then mints (H16), before it
    /// does: the render fact's id is no request yet, so it is not the same on both sides, and
    /// the request's line binds it to the replay's own. Only todaysim's deterministic ids make
    /// that possible (a render fact picked a request id of session p305122575 that a shrunk
    /// session mints later). Before, the render fact gave the id, the request's line did not
    /// bind, and a `typeChanged` mutant of the pull line at 10,000 ms got as its first
    /// divergence `line 20 different H16` whose two sides read the same. The trace is the
    /// property test's shrunk mutant (TODAYSIM_TRACE_SEED=305121681, session 894, session seed
    /// 305122575); its golden has the pull line `refreshing`.
    static let renderFactBeforeTabActivation = #"""
        {"todaysimTrace":1,"recorded":["emit","navigation","header","pull","overlay","analytics","resolution"],"endMs":10516}
        {"seq":1,"atMs":0,"kind":"input","type":"create","requestId":null,"data":{"input":{"uid":"u1","label":null,"language":"en","platform":"ios","route":"/embed/feeds/v1","loadingGate":"presentation","capabilities":null,"clock":"virtual","timing":{"pullWatchdogMs":12000,"headerWatchdogMs":12000,"softRefreshDeadlineMs":5000,"headerSettleMs":1000,"foregroundThresholdMs":5000,"manualRefreshWindowMs":10000},"analytics":{}},"outcome":"applied","via":"create"}}
        {"seq":2,"atMs":0,"kind":"navigation","type":"initial","requestId":null,"rule":"H3","data":{"loadId":1,"url":"/embed/feeds/v1?language=en&uid=u1","cause":"initial"}}
        {"seq":3,"atMs":0,"kind":"analytics","type":"app_sess_start","requestId":null,"rule":"H24","data":{"event":"app_sess_start","properties":{"uid":"u1"}}}
        {"seq":4,"atMs":0,"kind":"analytics","type":"page_view","requestId":null,"rule":"H24","data":{"event":"page_view","properties":{"uid":"u1"}}}
        {"seq":5,"atMs":0,"kind":"input","type":"liveWidget.created","requestId":null,"data":{"input":{"type":"liveWidget.created","requestId":"c-4"},"outcome":"applied","via":"gesture"}}
        {"seq":6,"atMs":0,"kind":"emit","type":"todayPage.refreshRequested","requestId":"c-4","rule":"H26","data":{"payload":{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"c-4","reason":"live_widget_created"}}}
        {"seq":7,"atMs":0,"kind":"input","type":"clock","requestId":null,"data":{"input":{"toNextTimer":true},"outcome":"applied","via":"clock"}}
        {"seq":8,"atMs":5000,"kind":"watchdog","type":"softRefreshDeadline","requestId":null,"rule":"H5","data":{"kind":"softRefreshDeadline"}}
        {"seq":9,"atMs":5000,"kind":"request","type":"timedOut","requestId":"c-4","rule":"H6","data":{"outcome":"timedOut","reason":"live_widget_created"}}
        {"seq":10,"atMs":5000,"kind":"violation","type":"M7","requestId":"c-4","rule":"M7","data":{"code":"M7","detail":"M7: Web never answered the native request c-4 (requested at 0 ms) before the 5000 ms deadline; every native request needs exactly one refreshResult"}}
        {"seq":11,"atMs":5000,"kind":"navigation","type":"recovery","requestId":"2e4fe3b5-29d3-558c-91b2-beee6a8cc717","rule":"H9","data":{"loadId":2,"url":"/embed/feeds/v1?language=en&uid=u1&requestId=2e4fe3b5-29d3-558c-91b2-beee6a8cc717","cause":"recovery"}}
        {"seq":12,"atMs":5000,"kind":"input","type":"pull","requestId":null,"data":{"input":{"type":"pull"},"outcome":"applied","via":"gesture"}}
        {"seq":13,"atMs":5000,"kind":"pull","type":"refreshing","requestId":"1ac4c0f6-782e-5e95-a776-000f2cf8e3c6","rule":"H10","data":{"state":"refreshing"}}
        {"seq":14,"atMs":5000,"kind":"emit","type":"todayPage.refreshRequested","requestId":"1ac4c0f6-782e-5e95-a776-000f2cf8e3c6","rule":"H10","data":{"payload":{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"1ac4c0f6-782e-5e95-a776-000f2cf8e3c6","reason":"user_pull"}}}
        {"seq":15,"atMs":5000,"kind":"input","type":"todayPage.allBatchesRendered","requestId":null,"data":{"input":{"type":"todayPage.allBatchesRendered","schemaVersion":1,"status":"succeeded","empty":false,"elapsedMs":300,"requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057"},"outcome":"applied","via":"webEvent"}}
        {"seq":16,"atMs":5000,"kind":"bridge","type":"todayPage.allBatchesRendered","requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057","data":{"outcome":"applied"}}
        {"seq":17,"atMs":5000,"kind":"violation","type":"M9","requestId":null,"rule":"M9","data":{"code":"M9","detail":"M9: Web rendered or failed load 2 before releasing the native overlay with webView.loadingPresentation {owner: \"web\"}"}}
        {"seq":18,"atMs":5000,"kind":"input","type":"tabActivated","requestId":null,"data":{"input":{"type":"tabActivated"},"outcome":"applied","via":"lifecycle"}}
        {"seq":19,"atMs":5000,"kind":"emit","type":"todayPage.refreshRequested","requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057","rule":"H16","data":{"payload":{"type":"todayPage.refreshRequested","schemaVersion":1,"requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057","reason":"tab_activated"}}}
        {"seq":20,"atMs":5000,"kind":"input","type":"clock","requestId":null,"data":{"input":{"advanceMs":3763},"outcome":"applied","via":"clock"}}
        {"seq":21,"atMs":8763,"kind":"input","type":"clock","requestId":null,"data":{"input":{"advanceMs":1753},"outcome":"applied","via":"clock"}}
        {"seq":22,"atMs":10000,"kind":"watchdog","type":"softRefreshDeadline","requestId":null,"rule":"H5","data":{"kind":"softRefreshDeadline"}}
        {"seq":23,"atMs":10000,"kind":"request","type":"timedOut","requestId":"1ac4c0f6-782e-5e95-a776-000f2cf8e3c6","rule":"H6","data":{"outcome":"timedOut","reason":"user_pull"}}
        {"seq":24,"atMs":10000,"kind":"violation","type":"M7","requestId":"1ac4c0f6-782e-5e95-a776-000f2cf8e3c6","rule":"M7","data":{"code":"M7","detail":"M7: Web never answered the native request 1ac4c0f6-782e-5e95-a776-000f2cf8e3c6 (requested at 5000 ms) before the 5000 ms deadline; every native request needs exactly one refreshResult"}}
        {"seq":25,"atMs":10000,"kind":"request","type":"timedOut","requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057","rule":"H6","data":{"outcome":"timedOut","reason":"tab_activated"}}
        {"seq":26,"atMs":10000,"kind":"violation","type":"M7","requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057","rule":"M7","data":{"code":"M7","detail":"M7: Web never answered the native request 0aec6ab9-057f-5481-9bce-f591fe2ad057 (requested at 5000 ms) before the 5000 ms deadline; every native request needs exactly one refreshResult"}}
        {"seq":27,"atMs":10000,"kind":"request","type":"cancelled","requestId":"2e4fe3b5-29d3-558c-91b2-beee6a8cc717","rule":"H3","data":{"outcome":"cancelled"}}
        {"seq":28,"atMs":10000,"kind":"navigation","type":"recovery","requestId":"f85befc4-d549-597a-b917-6272f8351b81","rule":"H9","data":{"loadId":3,"url":"/embed/feeds/v1?language=en&uid=u1&requestId=f85befc4-d549-597a-b917-6272f8351b81","cause":"recovery"}}
        {"seq":29,"atMs":10000,"kind":"pull","type":"idle","requestId":"f85befc4-d549-597a-b917-6272f8351b81","rule":"H11","data":{"state":"refreshing"}}
        """#

    @Test func aWebEventNamingTheIdATabActivationThenMintsBindsIt() throws {
        let mutant = Self.renderFactBeforeTabActivation.split(separator: "\n").map(String.init)
        #expect(mutant[19].contains(#""requestId":"0aec6ab9-057f-5481-9bce-f591fe2ad057","rule":"H16""#), "line 20: the tab activation's request")
        #expect(mutant[15].contains(#""type":"todayPage.allBatchesRendered""#) && mutant[15].contains("0aec6ab9-057f-5481-9bce-f591fe2ad057"),
                "line 16: the render fact names it first")
        let golden = mutant.map { $0.replacingOccurrences(of: #""kind":"pull","type":"idle""#, with: #""kind":"pull","type":"refreshing""#) }
        #expect(golden != mutant)
        // Whatever the replay's session id: another one's, or the recording's own (its ids then
        // are the trace's).
        for sessionId in ["replay", "p305122575"] {
            let verdict = try HostTraceVerifier.verify(golden.joined(separator: "\n"), sessionId: sessionId)
            #expect(verdict.conforms, "golden, replayed as \(sessionId): \(verdict.divergences.map(\.detail))")
        }
        // The mutant's divergences are its own edit's only: the pull line (H11).
        let verdict = try HostTraceVerifier.verify(mutant.joined(separator: "\n"), sessionId: "replay")
        #expect(verdict.json.serialized() == """
            {"conforms":false,"host":null,"toleranceMs":100,"endMs":10516,\
            "judged":{"emit":3,"navigation":3,"header":0,"pull":2,"overlay":0,"analytics":2,"resolution":0},\
            "divergences":[{"line":30,"atMs":10000,"kind":"pull","type":"idle","problem":"unexpected","rule":"H11",\
            "actual":{"type":"idle","requestId":"f85befc4-d549-597a-b917-6272f8351b81","data":{"state":"refreshing"}},\
            "detail":"H11: the host recorded pull idle at 10000 ms (line 30); the rules make none there"},\
            {"atMs":10000,"kind":"pull","type":"refreshing","problem":"missing","rule":"H11",\
            "expected":{"type":"refreshing","requestId":"f85befc4-d549-597a-b917-6272f8351b81","data":{"state":"refreshing"}},\
            "replaySeq":28,"detail":"H11: the rules make pull refreshing at 10000 ms; the host recorded none"}],\
            "divergenceCount":2,"session":null}
            """)
    }

    /// Issue 44, item 7: where the host's output and the rules' differ only in the id they name,
    /// the detail says which ids (the rest of it reads the same on both sides). A host that
    /// reuses the id Web made up for its header (H12) as the id of a tab activation's request
    /// (H4, H16): the rules' request has an id of the replay's own, which no line names.
    @Test func aDivergenceOnlyInAnIdNamesTheIds() throws {
        var runner = try SessionRunner(id: "r4", config: SessionConfig(uid: "u1"))
        try runner.apply(Web.started("w-1"))
        try runner.advance(by: 500)
        try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
        let minted = try #require(runner.pending.last)
        try runner.advance(by: 1000)
        let lines = HostTraceTests.trace(of: runner, recorded: ["emit"]).map { line in
            line.contains(#""kind":"emit""#) ? line.replacingOccurrences(of: minted, with: "w-1") : line
        }
        let verdict = try HostTraceTests.verify(lines)
        let different = try #require(verdict.divergences.first, "\(verdict.divergences.map(\.detail))")
        #expect(verdict.divergenceCount == 1)
        #expect(different.problem == .different && different.rule == .h16 && different.atMs == 500)
        #expect(different.actual?["requestId"] == "w-1")
        let rulesId = try #require(different.expected?["requestId"]?.stringValue)
        #expect(rulesId != "w-1" && rulesId != minted, "an id of the replay's own")
        #expect(different.detail == "H16: at 500 ms the host recorded todayPage.refreshRequested (tab_activated) "
            + "where the rules make todayPage.refreshRequested (tab_activated); the ids differ: the host's w-1, "
            + "the rules' \(rulesId) (the replay's own: no line of the trace was bound to it)")
    }

    /// The same where the rules' id is a caller's (the same on both sides, so given, not the
    /// replay's own) and the host minted its own instead (H4, H10): the host's id binds to
    /// nothing, and it was read as standing for the rules' one, `early` by 0 ms.
    @Test func aHostIgnoringTheCallersIdIsDifferentNamingBoth() throws {
        var runner = try SessionRunner(id: "r5", config: SessionConfig(uid: "u1"))
        try runner.apply(.gesture(.pull(requestId: "c-1")))
        try runner.advance(by: 1000)
        let lines = HostTraceTests.trace(of: runner, recorded: ["emit"]).map { line in
            line.contains(#""kind":"emit""#) ? line.replacingOccurrences(of: "c-1", with: "H-1") : line
        }
        let verdict = try HostTraceTests.verify(lines)
        #expect(verdict.divergences.map { "\($0.problem.rawValue) \($0.rule.rawValue): \($0.detail)" } == [
            "different H10: H10: at 0 ms the host recorded todayPage.refreshRequested (user_pull) where the rules make "
                + "todayPage.refreshRequested (user_pull); the ids differ: the host's H-1, the rules' c-1",
        ])
    }
}

import Foundation
import Testing
@testable import TodayHost

/// The one snapshot codec: a session is stored as its `SessionSnapshot`, in the store's binary
/// form or the first schema's JSON, and comes back equal, coordinator by coordinator.
@Suite struct SessionSnapshotTests {
    /// Random sessions from the randomized invariant test's generator, checked after every
    /// step: the binary form and the JSON form each give back the same snapshot and the same
    /// session, and a session's `stateBytes` are its snapshot's. The generator draws no chat,
    /// sheet or dialog input, so some steps are one of those (H25–H27). The run must reach
    /// every state a snapshot part can hold, or the round trip proves little.
    @Test func randomSessionsRoundTripThroughTheSnapshot() throws {
        var seen: Set<String> = []
        for seed: UInt64 in [3, 46, 0x5EED, 20_261_206] {
            var generator = InputGenerator(seed: seed)
            var config = generator.config()
            config.capabilities = config.effectiveCapabilities + [Capability.nativeDialog, Capability.liveWidgetCreation]
            var runner = try SessionRunner(config: config)
            for _ in 0..<600 {
                let input = generator.rng.chance(20) ? generator.rng.pick(Self.nativeSurfaceInputs) : generator.step(for: runner).input
                do throws(InputError) { _ = try runner.apply(input) } catch {}
                let session = runner.session
                let snapshot = session.snapshot
                let bytes = snapshot.stateBytes
                #expect(session.stateBytes == bytes)
                let fromBytes = try SessionSnapshot(stateBytes: bytes)
                // The first difference stops the run: one is enough to read.
                try #require(fromBytes == snapshot, "seed \(seed): the binary form changed the snapshot")
                try #require(HostSession(fromBytes) == session, "seed \(seed): a session made from its snapshot differs")
                let json = try JSONEncoder().encode(session)
                try #require(try JSONDecoder().decode(SessionSnapshot.self, from: json) == snapshot)
                try #require(try JSONDecoder().decode(HostSession.self, from: json) == session)
                seen.formUnion(Self.states(of: snapshot))
                if session.isClosed { break }
            }
        }
        let everyState: Set<String> = [
            "app.background", "document.loading", "document.rendered", "document.failed", "document.terminated",
            "document.awaitingResult", "overlay.visible", "overlay.hiddenByRender", "overlay.released",
            "header.refreshing", "header.updated", "header.failed", "pull.refreshing", "pull.lastOutcome",
            "manualWindow.gestured", "refresh.waiting", "recovery.spent", "chat.drafting", "chat.triggerId",
            "sheet.presented", "dialog.open",
        ]
        #expect(everyState.subtracting(seen).isEmpty, "never reached: \(everyState.subtracting(seen).sorted())")
    }

    /// `StateCodingTests.busySession()` as the build before `SessionSnapshot` stored it (4d34f56,
    /// JSON with its keys sorted, and the binary form): the JSON decodes to the same session, as
    /// a row of the first schema must, and both forms are written again to the letter.
    @Test func thePreviousBuildsFormsReadAndWriteTheSame() throws {
        let session = try StateCodingTests.busySession().session
        #expect(try JSONDecoder().decode(HostSession.self, from: Data(Self.previousJSON.utf8)) == session)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(session), as: UTF8.self) == Self.previousJSON)
        #expect(session.stateBytes.map { String(format: "%02x", $0) }.joined() == Self.previousBinary)
    }

    static let previousJSON = #"{"app":{"state":{"background":{"sinceMs":0}}},"chat":{"attribution":[{"name":"today_source","value":"p"}],"draft":"hi there","pendingTriggerId":"wgt_1"},"config":{"analytics":{"client_plat":"android-14","context":"{\"screen\":\"today\",\"slots\":[1,2.5,true,null]}","did":"d"},"capabilities":["today_page_revalidate_feedback.v1","native_dialog.v1","live_widget_creation.v1"],"clock":"virtual","label":"suite-7","language":"zh-Hant","loadingGate":"render","platform":"android","route":"\/embed\/feeds\/v1\/edit","timing":{"foregroundThresholdMs":5000,"headerSettleMs":750,"headerWatchdogMs":12000,"manualRefreshWindowMs":10000,"pullWatchdogMs":12000,"softRefreshDeadlineMs":5000},"uid":"u1"},"dialog":{"open":{"actions":[{"actionId":"delete","role":"destructive","title":"Delete"},{"actionId":"cancel","title":"Cancel"}],"callId":"e3c28028-bb9c-58e4-bbbc-d3acfd552627","title":"Delete?"}},"dialogCounter":1,"document":{"awaitingResult":false,"cause":"initial","contentVisible":true,"loadId":1,"overlay":{"releasedByWeb":false,"state":"hidden"},"renderedBatch":true,"state":"rendered","url":"\/embed\/feeds\/v1\/edit?language=zh-Hant&uid=u1"},"header":{"state":{"updated":{"hide":{"armedInStep":5,"dueAtMs":750},"requestId":"w1"}}},"id":"s1","injectedCapabilities":["today_page_revalidate_feedback.v1","native_dialog.v1","live_widget_creation.v1"],"isClosed":false,"lastSeq":29,"liveWidgetSheet":{"state":"presented"},"manualWindow":{"lastGestureAtMs":0},"nowMs":300,"pull":{"state":{"refreshing":{"requestId":"p1","watchdog":{"armedInStep":2,"dueAtMs":12000}}}},"recovery":{"armed":true},"refresh":{"deadline":{"armedInStep":2,"dueAtMs":5000},"pending":[{"reason":"user_pull","requestId":"p1","requestedAtMs":0},{"reason":"tab_activated","requestId":"t1","requestedAtMs":0}]},"requestCounter":0,"step":11,"uid":"u1","version":11,"violationCount":0}"#

    static let previousBinary = "02047331047531010e73756974652d370e7a682d48616e740e616e64726f6964282f656d6265642f66656564732f76312f656469740c72656e646572010642746f6461795f706167655f726576616c69646174655f666565646261636b2e7631206e61746976655f6469616c6f672e76312e6c6976655f7769646765745f6372656174696f6e2e76310e7669727475616cc0bb01c0bb01904edc0b904ea09c01010264000114616e64726f69642d313401587b2273637265656e223a22746f646179222c22736c6f7473223a5b312c322e352c747275652c6e756c6c5d7d0475310016d8043a1600000642746f6461795f706167655f726576616c69646174655f666565646261636b2e7631206e61746976655f6469616c6f672e76312e6c6976655f7769646765745f6372656174696f6e2e7631020002582f656d6265642f66656564732f76312f656469743f6c616e67756167653d7a682d48616e74267569643d753100001072656e64657265640e696e697469616c01010c68696464656e0004047731dc0b0a02047031c0bb0104000100040470310112757365725f70756c6c00047431011a7461625f6163746976617465640001904e040101106869207468657265010a7767745f310218746f6461795f736f7572636502701270726573656e746564014865336332383032382d626239632d353865342d626262632d6433616366643535323632370e44656c6574653f040c64656c6574650c44656c657465011664657374727563746976650c63616e63656c0c43616e63656c0002"

    /// H25–H27: links, drafts, sends, the sheet and the dialog.
    static let nativeSurfaceInputs: [Input] = [
        .webEvent(["type": "webView.navigationAction", "url": "today://chat?text=hi&msg_trigger_ele_id=w1&today_source=p"]),
        .gesture(.chatEdit(text: "edited")), .gesture(.chatSend),
        .webEvent(["type": "liveWidgetCreation.present"]), .gesture(.liveWidgetCancelled),
        .webEvent(["type": "nativeDialog.present", "title": "Delete?",
                   "actions": [["actionId": "delete", "title": "Delete", "role": "destructive"], ["actionId": "keep", "title": "Keep"]]]),
        .gesture(.dialogChoose(actionId: "keep")), .gesture(.dialogDismiss),
    ]

    /// What a snapshot holds, by the states of its parts.
    static func states(of snapshot: SessionSnapshot) -> Set<String> {
        var states: Set<String> = []
        if case .background = snapshot.app.state { states.insert("app.background") }
        states.insert("document.\(snapshot.document.state.rawValue)")
        if snapshot.document.awaitingResult { states.insert("document.awaitingResult") }
        switch (snapshot.document.overlay.state, snapshot.document.overlay.releasedByWeb) {
        case (.visible, _): states.insert("overlay.visible")
        case (.hidden, false): states.insert("overlay.hiddenByRender")
        case (.hidden, true): states.insert("overlay.released")
        }
        switch snapshot.header.state {
        case .hidden: break
        case .refreshing: states.insert("header.refreshing")
        case .updated: states.insert("header.updated")
        case .failed: states.insert("header.failed")
        }
        if case .refreshing = snapshot.pull.state { states.insert("pull.refreshing") }
        if snapshot.pull.lastOutcome != nil { states.insert("pull.lastOutcome") }
        if snapshot.manualWindow.lastGestureAtMs != nil { states.insert("manualWindow.gestured") }
        if !snapshot.refresh.pending.isEmpty { states.insert("refresh.waiting") }
        if !snapshot.recovery.armed { states.insert("recovery.spent") }
        if snapshot.chat.draft != nil { states.insert("chat.drafting") }
        if snapshot.chat.pendingTriggerId != nil { states.insert("chat.triggerId") }
        if snapshot.liveWidgetSheet.state == .presented { states.insert("sheet.presented") }
        if snapshot.dialog.open != nil { states.insert("dialog.open") }
        return states
    }
}

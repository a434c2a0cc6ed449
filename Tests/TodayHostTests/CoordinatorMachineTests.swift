import Testing
@testable import TodayHost

/// Each coordinator alone, as a straight-line script: an event, then the exact effects it
/// answers and the state it is left in.
@Suite struct CoordinatorMachineTests {
    static func at(_ ms: Millis, step: Int = 1) -> Instant { Instant(ms: ms, step: step) }

    static func visibility(_ visible: Bool) -> [Effect] {
        [.emit(type: "webView.visibilityWillChange", requestId: nil,
               payload: ["type": "webView.visibilityWillChange", "schemaVersion": 1, "visible": .bool(visible)], rule: .h15),
         .emit(type: "webView.visibilityChanged", requestId: nil,
               payload: ["type": "webView.visibilityChanged", "schemaVersion": 1, "visible": .bool(visible)], rule: .h15)]
    }

    /// H3, H7, H18, H22, H23, M6: a load, its render facts, its own result and a new load.
    @Test func h22_theDocumentFollowsItsLoad() {
        var document = DocumentLoader()
        #expect(document.load(url: "/embed/a", requestId: "r1", cause: .recovery)
            == [.navigation(loadId: 1, url: "/embed/a", cause: .recovery, requestId: "r1")])
        #expect(document.state == .loading)
        #expect(document.ownedRequestId == "r1")
        #expect(document.allBatchesRendered(empty: false, gate: .render) == [])
        #expect(document.state == .rendered)
        #expect(document.renderedBatch && !document.contentVisible)
        #expect(document.loadFailed(gate: .render) == [.overlay(from: .visible, to: .hidden)])
        #expect(document.state == .failed)
        #expect(document.renderedBatch, "M6 reads what the load rendered before it failed")
        #expect(document.ownRequestSettled(.succeeded, rule: .h7)
            == [.requestSettled(requestId: "r1", outcome: .succeeded, reason: nil, rule: .h7)])
        #expect(document.ownedRequestId == nil)
        #expect(document.requestId == "r1")
        #expect(document.ownRequestSettled(.cancelled, rule: .h3) == [])
        #expect(document.terminated() == [])
        #expect(document.state == .terminated)
        #expect(document.firstBatchRendered(gate: .presentation) == [])
        #expect(document.state == .rendered)
        #expect(document.contentVisible)
        #expect(document.load(url: "/embed/b", requestId: nil, cause: .navigation)
            == [.navigation(loadId: 2, url: "/embed/b", cause: .navigation, requestId: nil), .overlay(from: .hidden, to: .visible)])
        #expect(document.state == .loading)
        #expect(!document.renderedBatch && !document.contentVisible && !document.awaitingResult)
        #expect(document.loadId == 2)
    }

    /// H23: Web's release hides the overlay once a load; a render fact under the `render` gate
    /// hides it without releasing it; a new load shows it again.
    @Test func h23_theOverlayIsReleasedOnceALoad() {
        var document = DocumentLoader()
        #expect(document.loadingPresentation(owner: "native") == [.ignored(.ownerNotWeb)])
        #expect(document.loadingPresentation(owner: "web") == [.overlay(from: .visible, to: .hidden)])
        #expect(document.overlay.releasedByWeb)
        #expect(document.loadingPresentation(owner: "web") == [.ignored(.alreadyReleased)])

        var overlay = LoadingOverlay()
        #expect(overlay.hideForRender() == [.overlay(from: .visible, to: .hidden)])
        #expect(overlay.hideForRender() == [])
        #expect(overlay.state == .hidden && !overlay.releasedByWeb)
        #expect(overlay.webReleased() == [])
        #expect(overlay.releasedByWeb)
        #expect(overlay.webReleased() == [.ignored(.alreadyReleased)])
        #expect(overlay.newLoad() == [.overlay(from: .hidden, to: .visible)])
        #expect(overlay.state == .visible && !overlay.releasedByWeb)
        #expect(overlay.newLoad() == [])
    }

    /// H15: a return after the threshold asks Web for a soft refresh under the caller's id.
    @Test func h15_aReturnAfterTheThresholdRequestsARefresh() {
        var app = ForegroundTracker()
        #expect(app.appForegrounded(at: Self.at(10), thresholdMs: 1000, requestId: nil) == [.ignored(.alreadyForeground)])
        #expect(app.appBackgrounded(at: Self.at(100)) == Self.visibility(false) + [.hostAnalytics(event: "page_end")])
        #expect(app.backgroundedAtMs == 100)
        #expect(app.appBackgrounded(at: Self.at(200)) == [.ignored(.alreadyBackground)])
        #expect(app.backgroundedAtMs == 100)
        #expect(app.appForegrounded(at: Self.at(1099), thresholdMs: 1000, requestId: "f1")
            == Self.visibility(true) + [.hostAnalytics(event: "page_view")])
        #expect(app.isForeground && app.backgroundedAtMs == nil)
        #expect(app.appBackgrounded(at: Self.at(2000)) == Self.visibility(false) + [.hostAnalytics(event: "page_end")])
        #expect(app.appForegrounded(at: Self.at(3000), thresholdMs: 1000, requestId: "f1")
            == Self.visibility(true) + [.hostAnalytics(event: "page_view"), .requestSoftRefresh(reason: .appForeground, requestId: "f1")])
    }

    /// H26: `{presented}` says whether presentation started; a cancel needs a sheet.
    @Test func h26_theSheetAnswersWhetherItPresented() {
        var sheet = LiveWidgetSheet()
        #expect(sheet.presentRequested(advertised: false) == [.ignored(.capabilityNotAdvertised), .answer(["presented": false])])
        #expect(sheet.state == .hidden)
        #expect(sheet.creationCancelled() == [.ignored(.noSheet)])
        #expect(sheet.presentRequested(advertised: true) == [.answer(["presented": true])])
        #expect(sheet.state == .presented)
        #expect(sheet.presentRequested(advertised: true) == [.answer(["presented": false])])
        #expect(sheet.creationCancelled() == [])
        #expect(sheet.state == .hidden)
        #expect(sheet.presentRequested(advertised: true) == [.answer(["presented": true])])
        #expect(sheet.dismissed() == [])
        #expect(sheet.state == .hidden)
        #expect(sheet.dismissed() == [])
    }

    /// H10: a pull within the window of the previous one, or on a dead document, reloads.
    @Test func h10_aRepeatedPullReloads() {
        var window = ManualRefreshWindow()
        #expect(window.lastGestureAtMs == nil)
        #expect(window.pullGesture(requestId: "p1", at: Self.at(1000), windowMs: 500, documentTerminated: false)
            == [.requestSoftRefresh(reason: .userPull, requestId: "p1")])
        #expect(window.lastGestureAtMs == 1000)
        #expect(window.pullGesture(requestId: "p2", at: Self.at(1500), windowMs: 500, documentTerminated: false)
            == [.reload(cause: .manualRepeat, requestId: "p2")])
        #expect(window.pullGesture(requestId: "p3", at: Self.at(2001), windowMs: 500, documentTerminated: false)
            == [.requestSoftRefresh(reason: .userPull, requestId: "p3")])
        #expect(window.pullGesture(requestId: "p4", at: Self.at(9000), windowMs: 500, documentTerminated: true)
            == [.reload(cause: .manualRepeat, requestId: "p4")])
        #expect(window.lastGestureAtMs == 9000)
    }
}

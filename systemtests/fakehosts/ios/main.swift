// A fake iOS Today Page host for one scenario, recording through the real Swift recorder
// (Recorder/TodayPageTraceRecorder.swift, compiled beside this file by swiftc): what
// systemtests/test_android_recorder.py compares with fake-android-host's recording of the same
// scenario (`todaysim compare-traces`). Its clock is the scenario's. Arguments: the trace's path,
// and how long an app must have been away for its return to revalidate (5000 ms: H15).
import Foundation

final class ScenarioClock: @unchecked Sendable { var ms: Int64 = 0 }

final class FakeIOSHost {
    let recorder: TodayPageTraceRecorder
    let clock: ScenarioClock
    let foregroundThresholdMs: Int64
    var backgroundSince: Int64?
    var spinnerId: String?

    init(path: String, foregroundThresholdMs: Int64, clock: ScenarioClock) throws {
        self.clock = clock
        self.foregroundThresholdMs = foregroundThresholdMs
        recorder = try TodayPageTraceRecorder(url: URL(fileURLWithPath: path), creation: ["uid": "u1", "platform": "ios"],
                                              recorded: [.emit, .navigation, .pull, .overlay], host: "fake iOS host",
                                              clock: { clock.ms })
        try recorder.navigated(cause: "initial", url: "https://today.example.com/embed/feeds/v1?uid=u1&language=en")
    }

    func web(_ message: [String: Any]) throws {
        try recorder.webEvent(message)
        switch message["type"] as? String {
        case "webView.loadingPresentation":
            try recorder.overlay("hidden")
        case "todayPage.refreshResult":
            guard let id = message["requestId"] as? String, id == spinnerId else { return }
            spinnerId = nil
            try recorder.pull("idle", requestId: id, outcome: message["status"] as? String)
        default:
            break
        }
    }

    func background() throws {
        try recorder.lifecycle(["type": "background"])
        backgroundSince = clock.ms
        try visibility(false)
    }

    func foreground() throws {
        try recorder.lifecycle(["type": "foreground"])
        guard let since = backgroundSince else { return }
        backgroundSince = nil
        try visibility(true)
        if clock.ms - since >= foregroundThresholdMs { try request("app_foreground", id: UUID().uuidString) }
    }

    func pull() throws -> String {
        try recorder.gesture(["type": "pull"])
        let id = UUID().uuidString
        spinnerId = id
        try recorder.pull("refreshing", requestId: id)
        try request("user_pull", id: id)
        return id
    }

    private func request(_ reason: String, id: String) throws {
        try recorder.emitted(["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": id, "reason": reason])
    }

    private func visibility(_ visible: Bool) throws {
        for type in ["webView.visibilityWillChange", "webView.visibilityChanged"] {
            try recorder.emitted(["type": type, "schemaVersion": 1, "visible": visible])
        }
    }
}

let arguments = CommandLine.arguments
let clock = ScenarioClock()
let host = try FakeIOSHost(path: arguments[1], foregroundThresholdMs: Int64(arguments[2])!, clock: clock)
// The scenario, the same in fake-android-host: the page releases the overlay, the app goes away
// for 4.5 s and comes back, the user pulls and Web answers.
clock.ms = 100
try host.web(["type": "webView.loadingPresentation", "owner": "web", "reason": "placeholders_visible"])
clock.ms = 1_000
try host.background()
clock.ms = 5_500
try host.foreground()
clock.ms = 8_000
let pulled = try host.pull()
clock.ms = 8_400
try host.web(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": pulled, "mode": "soft", "status": "succeeded"])
clock.ms = 10_000
try host.recorder.close()

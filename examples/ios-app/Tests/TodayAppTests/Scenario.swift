import Foundation
import TodayApp
import TodayTraceRecorder

/// The test's own driving of the host (what `runTodayPageScenario()` stands for in
/// docs/TRACES.md): the page loads, Web releases the overlay, the user pulls, Web answers. The
/// recorder's clock is the test's, moved by hand.
@MainActor
func runTodayPageScenario(recorded: [TodayPageTraceRecorder.Kind] = [.emit, .navigation, .pull, .overlay]) async throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("today-page-\(UUID().uuidString).jsonl")
    let clock = TestClock()
    let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1", "platform": "ios"], recorded: recorded,
                                              host: "TodayApp example", clock: { clock.ms })
    let host = try TodayPageHost(uid: "u1", recorder: recorder)
    clock.ms = 100
    try host.webPosted(["type": "webView.loadingPresentation", "owner": "web", "reason": "placeholders_visible"])
    clock.ms = 1_000
    try host.userPulled()
    let id = try require(host.pullRequestId, "the pull's request id")
    clock.ms = 1_400
    try host.webPosted(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": id, "mode": "soft", "status": "succeeded"])
    clock.ms = 3_000
    try recorder.close()
    return url
}

/// Milliseconds a test sets.
final class TestClock: @unchecked Sendable {
    var ms: Int64 = 0
}

struct ScenarioFailure: Error, CustomStringConvertible {
    var description: String
}

/// `value`, or a thrown failure naming what was missing.
func require<T>(_ value: T?, _ what: String = "a value") throws -> T {
    guard let value else { throw ScenarioFailure(description: "expected \(what), found nil") }
    return value
}

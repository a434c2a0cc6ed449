import Foundation
import Testing
@testable import TodayHost
import TodayTraceRecorder

/// Issue 44, item 6: one scenario played on two hosts, each recording through the recorder an
/// app copies (`MiniHost`, one as iOS and one as Android, each minting its own random UUIDs),
/// compared: identical when both hosts follow the rules, and a planted platform difference named
/// with its rule on the side that has it.
@Suite struct ComparedRecordingsTests {
    /// The trace `scenario` makes on a MiniHost of `platform`.
    static func recording(platform: String, bugs: MiniHost.Bugs = [], deadlineOffsetMs: Int64 = 0,
                          _ scenario: PlantedBugTests.Scenario) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-\(platform)-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let host = try MiniHost(url: url, bugs: bugs, deadlineOffsetMs: deadlineOffsetMs, platform: platform)
        host.advance(to: 100)
        host.web(["type": "webView.loadingPresentation", "owner": "web", "reason": "placeholders_visible"])
        scenario(host)
        try host.recorder.close()
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Away 6 s and back (H15), Web answering the foreground request with a header (H12, H13);
    /// a pull answered (H10, H11); a tab activation left unanswered: the deadline reloads (H6, H9).
    static let day: PlantedBugTests.Scenario = { host in
        host.advance(to: 1000); host.background()
        host.advance(to: 7000); host.foreground()
        host.advance(to: 7100); host.web(PlantedBugTests.started(host.lastRequestId))
        host.advance(to: 7400); host.web(PlantedBugTests.result(host.lastRequestId, "succeeded"))
        host.advance(to: 9000); host.pull()
        host.advance(to: 9300); host.web(PlantedBugTests.result(host.spinnerId, "succeeded"))
        host.advance(to: 12_000); host.tabActivated()
        host.advance(to: 18_000)
    }

    @Test func oneScenarioOnTwoConformingHostsIsIdentical() throws {
        let ios = try Self.recording(platform: "ios", Self.day)
        let android = try Self.recording(platform: "android", Self.day)
        let comparison = try HostTraceComparison.compare(ios, android)
        #expect(comparison.identical, "\(comparison.differences.map(\.detail))")
        #expect(comparison.a.conforms && comparison.b.conforms, "\(comparison.a.divergences.map(\.detail)) \(comparison.b.divergences.map(\.detail))")
        #expect(comparison.a.host == "MiniHost ios" && comparison.b.host == "MiniHost android")
        #expect(comparison.compared.first { $0.0 == .emit }?.1 == 7, "\(comparison.compared)")
    }

    /// Android revalidates after 4 s away: one difference, B's request, H15, B's own fault.
    @Test func androidRevalidatingAfter4sIsNamedH15OnTheAndroidSide() throws {
        let ios = try Self.recording(platform: "ios", PlantedBugTests.foregroundAfter4s)
        let android = try Self.recording(platform: "android", bugs: .foregroundAfter4s, PlantedBugTests.foregroundAfter4s)
        let comparison = try HostTraceComparison.compare(ios, android)
        #expect(comparison.differenceCount == 1, "\(comparison.differences.map(\.detail))")
        let difference = try #require(comparison.differences.first)
        #expect(difference.problem == .onlyB && difference.rule == .h15 && difference.side == .b, "\(difference.detail)")
        #expect(difference.b?.atMs == 5000 && difference.b?.output["reason"] == "app_foreground")
        #expect(comparison.a.conforms && comparison.b.divergences.first?.rule == .h15)
    }

    /// Each host's own deadline jitter: within the tolerance of the other's, identical; 400 ms
    /// later, the recovery reload is `apart` (H9), B's own fault too.
    @Test func aDeadlineLaterOnOneHostIsApartBeyondTheTolerance() throws {
        let ios = try Self.recording(platform: "ios", deadlineOffsetMs: -30, Self.day)
        let close = try Self.recording(platform: "android", deadlineOffsetMs: 40, Self.day)
        let near = try HostTraceComparison.compare(ios, close)
        #expect(near.identical, "\(near.differences.map(\.detail))")
        let late = try Self.recording(platform: "android", deadlineOffsetMs: 400, Self.day)
        let far = try HostTraceComparison.compare(ios, late)
        let reload = try #require(far.differences.first { $0.kind == .navigation }, "\(far.differences.map(\.detail))")
        #expect(reload.problem == .apart && reload.rule == .h9 && reload.side == .b && reload.deltaMs == 430, "\(reload.detail)")
    }
}

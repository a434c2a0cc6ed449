import Foundation
import Testing
import TodayHost
import TodayTraceRecorder

/// Issue 21, items 4 and 5: traces todaysim did not write. A separate host (`MiniHost`) records
/// through the recorder an app copies; written without a bug it conforms, and each planted bug
/// of the checklist is found with its first divergence naming exactly its rule.
@Suite struct PlantedBugTests {
    typealias Scenario = @Sendable (MiniHost) -> Void

    /// Runs `scenario` on a MiniHost and judges the trace it recorded.
    static func verdict(bugs: MiniHost.Bugs = [], deadlineOffsetMs: Int64 = 0, _ scenario: Scenario) throws -> (Verdict, String) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-trace-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let host = try MiniHost(url: url, bugs: bugs, deadlineOffsetMs: deadlineOffsetMs)
        host.advance(to: 100)
        host.web(["type": "webView.loadingPresentation", "owner": "web", "reason": "placeholders_visible"])
        scenario(host)
        try host.recorder.close()
        let text = try String(contentsOf: url, encoding: .utf8)
        return (try HostTraceVerifier.verify(text), text)
    }

    static func result(_ id: String?, _ status: String) -> [String: Any] {
        ["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": id ?? "", "mode": "soft", "status": status]
    }

    static func started(_ id: String?) -> [String: Any] {
        ["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": id ?? "", "presentation": "header"]
    }

    // The scenarios, one per planted bug.

    static let foregroundAfter4s: Scenario = { host in
        host.advance(to: 1000); host.background()
        host.advance(to: 5000); host.foreground()
        host.advance(to: 8000)
    }

    static let staleResult: Scenario = { host in
        host.advance(to: 1000); host.pull()
        let id = host.spinnerId
        host.advance(to: 1200); host.web(result("stale-1", "succeeded"))
        host.advance(to: 1500); host.web(result(id, "succeeded"))
        host.advance(to: 3000)
    }

    static let navigationWithHeader: Scenario = { host in
        host.advance(to: 500); host.background()
        host.advance(to: 6000); host.foreground()
        host.advance(to: 6100); host.web(started(host.lastRequestId))
        host.advance(to: 6500); host.navigation()
        host.advance(to: 9000)
    }

    static let cancelledResult: Scenario = { host in
        host.advance(to: 1000); host.web(started("web-1"))
        host.advance(to: 1300); host.web(result("web-1", "cancelled"))
        host.advance(to: 3000)
    }

    static let lateResult: Scenario = { host in
        host.advance(to: 1000); host.tabActivated()
        let id = host.lastRequestId
        host.advance(to: 6000)  // the deadline: timed out, the one recovery reload
        host.advance(to: 6100); host.web(["type": "webView.loadingPresentation", "owner": "web"])
        host.advance(to: 6500); host.web(result(id, "failed"))
        host.advance(to: 8000)
    }

    static let unansweredPull: Scenario = { host in
        host.advance(to: 1000); host.pull()
        host.advance(to: 22_000)
    }

    static let answeredPull: Scenario = { host in
        host.advance(to: 1000); host.pull()
        host.advance(to: 1300); host.web(result(host.spinnerId, "succeeded"))
        host.advance(to: 3000)
    }

    static let cases: [(String, MiniHost.Bugs, Scenario, Rule)] = [
        ("a foreground return at 4 s that requests", .foregroundAfter4s, foregroundAfter4s, .h15),
        ("a stale result that ends the spinner", .staleResultEndsSpinner, staleResult, .h11),
        ("a header not cleared on navigation", .headerKeptOnNavigation, navigationWithHeader, .h14),
        ("a cancelled result shown as updated", .cancelledShownAsUpdated, cancelledResult, .h13),
        ("a second reload on a late result", .reloadOnLateResult, lateResult, .h9),
        ("a spinner past its watchdog", .spinnerPastWatchdog, unansweredPull, .h11),
        ("a header mirroring a user pull", .headerMirrorsPull, answeredPull, .h10),
    ]

    @Test(arguments: 0..<cases.count)
    func withoutTheBugTheHostConforms(_ index: Int) throws {
        let (name, _, scenario, _) = Self.cases[index]
        let (verdict, text) = try Self.verdict(scenario)
        #expect(verdict.conforms, "\(name): \(verdict.divergences.map(\.detail))\n\(text)")
    }

    @Test(arguments: 0..<cases.count)
    func eachPlantedBugIsFoundByItsRule(_ index: Int) throws {
        let (name, bug, scenario, rule) = Self.cases[index]
        let (verdict, text) = try Self.verdict(bugs: bug, scenario)
        let first = try #require(verdict.divergences.first, "\(name): the bug was not found\n\(text)")
        #expect(first.rule == rule, "\(name): first divergence \(first.detail)\n\(verdict.divergences.map(\.detail))")
    }

    /// A real host's jitter below the tolerance conforms; above it, it does not.
    @Test func deadlineJitterWithinTheToleranceConformsAndBeyondItDoesNot() throws {
        let (early, earlyText) = try Self.verdict(deadlineOffsetMs: -50, Self.lateResult)
        #expect(early.conforms, "\(early.divergences.map(\.detail))\n\(earlyText)")
        let (late, _) = try Self.verdict(deadlineOffsetMs: 400, Self.unansweredPull)
        #expect(!late.conforms)
        #expect(late.divergences.first?.rule == .h9, "\(late.divergences.map(\.detail))")
    }

    /// A partial trace: `recorded` without `header` and `analytics` judges only the rest.
    @Test func aPartialTraceJudgesOnlyWhatItRecorded() throws {
        let (_, text) = try Self.verdict(bugs: .headerKeptOnNavigation, Self.navigationWithHeader)
        var lines = text.split(separator: "\n").map(String.init)
        lines[0] = #"{"todaysimTrace":1,"recorded":["emit","navigation","pull","overlay"]}"#
        let verdict = try HostTraceVerifier.verify(lines.joined(separator: "\n"))
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
        #expect(verdict.judged.map(\.0) == [.emit, .navigation, .pull, .overlay])
    }
}

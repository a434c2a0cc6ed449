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
}

import Foundation
import Testing
@testable import TodayHost

/// Issue 21, item 6: one streaming pass holds a bounded number of outputs whatever the trace's
/// length, also when the host diverges all the way through: a recorded kind the host never
/// wrote (every replay output unpaired) and a kind whose every output differs (every trace
/// output unpaired too). Each divergence is still found and counted.
@Suite struct HostTraceBoundTests {
    /// `cycles` pulls, each started with the header and answered, 11 s apart: three header
    /// outputs a cycle (refreshing, updated, hidden) and a `track` event's analytics.
    static func longSession(cycles: Int) throws -> SessionRunner {
        var runner = try SessionRunner(id: "long", config: SessionConfig(uid: "u1"))
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.firstBatch())
        for cycle in 0..<cycles {
            try runner.apply(.gesture(.pull(requestId: nil)))
            let id = try #require(runner.pending.last)
            try runner.apply(Web.started(id))
            try runner.advance(by: 300)
            try runner.apply(Web.result(id))
            try runner.apply(Web.track([("event", "tap"), ("properties", ["cycle": .int(cycle)])]))
            try runner.advance(by: 11_000)
        }
        return runner
    }

    /// Feeds the lines one at a time; the verdict and the most outputs held at any line.
    static func judge(_ lines: [String]) throws -> (Verdict, maxHeld: Int) {
        var verifier = HostTraceVerifier()
        var maxHeld = 0
        for line in lines {
            try verifier.feed(line: line.utf8)
            maxHeld = max(maxHeld, verifier.heldOutputs)
        }
        let verdict = try verifier.finish()
        return (verdict, maxHeld)
    }

    static let bound = HostTraceVerifier.gapLimit + 200

    @Test func aGoldenLongTraceHoldsAlmostNothing() throws {
        let (verdict, maxHeld) = try Self.judge(HostTraceTests.trace(of: Self.longSession(cycles: 1200)))
        #expect(verdict.conforms, "\(verdict.divergences.prefix(3).map(\.detail))")
        #expect(maxHeld < 100, "held \(maxHeld) outputs at most")
    }

    @Test func aRecordedKindTheHostNeverWroteIsJudgedAsItGoes() throws {
        let golden = HostTraceTests.trace(of: try Self.longSession(cycles: 1200))
        let headers = golden.filter { $0.contains("\"kind\":\"header\"") }.count
        #expect(headers > Self.bound, "more header outputs (\(headers)) than the pass may hold")
        let (verdict, maxHeld) = try Self.judge(golden.filter { !$0.contains("\"kind\":\"header\"") })
        #expect(verdict.divergenceCount == headers, "every header output the rules make is missing")
        #expect(verdict.divergences.allSatisfy { $0.kind == .header && $0.problem == .missing && $0.replaySeq != nil })
        #expect(Set(verdict.divergences.map(\.rule)).isSubset(of: [.h12, .h13]), "\(Set(verdict.divergences.map(\.rule)))")
        #expect(maxHeld <= Self.bound, "held \(maxHeld) outputs at most (bound \(Self.bound))")
    }

    @Test func aKindWhoseEveryOutputDiffersIsJudgedAsItGoes() throws {
        let golden = HostTraceTests.trace(of: try Self.longSession(cycles: 2500))
        // The host's analytics carry another property value: each one `different`.
        let changed = golden.map { line in
            line.contains("\"kind\":\"analytics\"") && line.contains("\"cycle\":") ? line.replacingOccurrences(of: "\"cycle\":", with: "\"cycle\":-1") : line
        }
        let tracks = zip(golden, changed).filter { $0 != $1 }.count
        #expect(tracks == 2500 && tracks > Self.bound)
        let (verdict, maxHeld) = try Self.judge(changed)
        #expect(verdict.divergenceCount == tracks, "one divergence for each changed output: \(verdict.divergenceCount)")
        #expect(verdict.divergences.allSatisfy { $0.kind == .analytics && $0.problem == .different && $0.rule == .h24 },
                "\(verdict.divergences.prefix(3).map(\.detail))")
        #expect(maxHeld <= 2 * Self.bound, "held \(maxHeld) outputs at most")
    }
}

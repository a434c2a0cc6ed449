import Foundation
import Testing
@testable import TodayHost

/// Pairing in order (docs/TRACES.md, "The comparison and the verdict"): a greedy pair does not
/// pass over a replay output that the trace's next line of the kind pairs with and nothing else.
@Suite struct HostTracePairingTests {
    /// Issue 44, item 7 (found beside it: TODAYSIM_TRACE_SEED=305121681, session 894, session
    /// seed 305122575): three navigations in one millisecond, the initial load (H3), Web content
    /// terminated (H18) and an account switch (H19). A host that records its initial load as an
    /// account switch: that line paired with the account switch two places on, passing over the
    /// termination, which the next line says; the first divergence was then that next line,
    /// `unexpected` H18. It is the edited line's own now: `unexpected` H19, the initial load
    /// `missing` (H3), the rest paired.
    @Test func aLineThatSaysWhatALaterOutputSaysLeavesTheOnesBeforeItToTheNextLines() throws {
        var runner = try SessionRunner(id: "n1", config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.webContentTerminated(requestId: nil)))
        try runner.apply(.lifecycle(.accountSwitch(uid: "u1")))
        try runner.advance(by: 1000)
        #expect(runner.navigations.map(\.type) == ["initial", "termination", "accountSwitch"])
        let golden = HostTraceTests.trace(of: runner, recorded: ["navigation"])
        #expect(try HostTraceTests.verify(golden).conforms)
        let initial = try #require(golden.firstIndex { $0.contains(#""kind":"navigation","type":"initial""#) })
        var mutant = golden
        mutant[initial] = golden[initial].replacingOccurrences(of: "initial", with: "accountSwitch")
        let verdict = try HostTraceTests.verify(mutant)
        #expect(verdict.divergences.map { "\($0.line.map(String.init) ?? "-") \($0.atMs) \($0.type) \($0.problem.rawValue) \($0.rule.rawValue)" }
            == ["\(initial + 1) 0 accountSwitch unexpected H19", "- 0 initial missing H3"])
    }

    /// Issue 44, item 7 (found beside it, on a fresh seed: TODAYSIM_TRACE_SEED=2331117262,
    /// session 1087, session seed 2331118349): a pull's spinner line recorded twice as the
    /// recording stops (H10), the request's deadline 100 ms on. The rules' recovery reload and
    /// its spinner (H9, H11) come after the end, where they only pair: the duplicate was
    /// `different` from that spinner, as if the host had made it wrong (H11, and ids that
    /// differ). It is `unexpected` now, with its own rule, H10.
    @Test func aLeftoverIsNotDifferentFromAnOutputAfterTheEnd() throws {
        var config = SessionConfig(uid: "u1")
        config.timing.softRefreshDeadlineMs = 100
        var runner = try SessionRunner(id: "n2", config: config)
        try runner.apply(.gesture(.pull(requestId: "c-1")))
        let golden = HostTraceTests.trace(of: runner)
        #expect(try HostTraceTests.verify(golden).conforms)
        let spinner = try #require(golden.firstIndex { $0.contains(#""kind":"pull","type":"refreshing""#) })
        var mutant = golden
        mutant.insert(golden[spinner], at: spinner + 1)
        let verdict = try HostTraceTests.verify(mutant)
        #expect(verdict.divergences.map { "\($0.line.map(String.init) ?? "-") \($0.atMs) \($0.type) \($0.problem.rawValue) \($0.rule.rawValue)" }
            == ["\(spinner + 2) 0 refreshing unexpected H10"])
    }
}

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
}

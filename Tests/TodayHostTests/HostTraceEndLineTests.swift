import Testing
@testable import TodayHost

/// Issue 44, item 1: the end line (`{"atMs": T, "kind": "end"}`, written by a recorder when it
/// closes). A host whose spinner never ends passes when recording stops before the watchdog was
/// due and the trace does not say when it stopped; with the end line the replay runs to it and
/// the spinner's end is `missing` (H11).
@Suite struct HostTraceEndLineTests {
    static let header = #"{"todaysimTrace":1,"recorded":["pull"]}"#
    static let creation = #"{"atMs":0,"kind":"input","type":"create","data":{"via":"create","input":{"uid":"u1"}}}"#
    /// Web answers the first load and then a pull at 33 s that it never answers; the host's
    /// spinner never ends. Its watchdog is due at 45 s, the soft-refresh deadline at 38 s.
    static let stuckSpinner = [
        header, creation,
        #"{"atMs":100,"kind":"input","type":"webView.loadingPresentation","data":{"via":"webEvent","input":{"type":"webView.loadingPresentation","owner":"web","reason":"placeholders_visible"}}}"#,
        #"{"atMs":33000,"kind":"input","type":"pull","data":{"via":"gesture","input":{"type":"pull","requestId":"p1"}}}"#,
        #"{"atMs":33000,"kind":"pull","type":"refreshing","requestId":"p1","data":{"state":"refreshing"}}"#,
        #"{"atMs":35000,"kind":"bridge","type":"whatever","data":{}}"#,
    ]

    static func verdict(_ lines: [String]) throws(TraceProblem) -> Verdict {
        try HostTraceVerifier.verify(lines.joined(separator: "\n") + "\n")
    }

    static func summary(_ verdict: Verdict) -> [String] {
        verdict.divergences.map { "\($0.rule.rawValue) \($0.problem.rawValue) \($0.type) \($0.atMs)" }
    }

    @Test func aTraceCutBeforeTheWatchdogConformsOnlyWithTheWarning() throws {
        let verdict = try Self.verdict(Self.stuckSpinner)
        #expect(verdict.conforms && verdict.endMs == 35_000)
        #expect(verdict.warnings.count == 1 && verdict.warningCount == 1)
        let warning = try #require(verdict.warnings.first)
        #expect(warning.line == 6 && warning.field == "end")
        #expect(warning.detail.hasPrefix("no end line: timers due after line 6 (softRefreshDeadline at 38000 ms, pullWatchdog for p1 at 45000 ms) were not judged"),
                "\(warning.detail)")
        #expect(verdict.json.serialized().contains(#""warnings":[{"line":6,"field":"end","detail":"no end line: "#),
                "the verdict's JSON lists it as any warning")
    }

    @Test func theSameTraceWithItsEndLineIsMissingTheSpinnersEnd() throws {
        let verdict = try Self.verdict(Self.stuckSpinner + [#"{"atMs":46000,"kind":"end"}"#])
        #expect(verdict.endMs == 46_000 && verdict.warnings.isEmpty)
        #expect(Self.summary(verdict) == ["H11 missing refreshing 38000", "H11 missing idle 45000"],
                "the deadline's reload takes the spinner over (H11), its watchdog ends it (H11): the host did neither")
        let sameInHeader = [#"{"todaysimTrace":1,"recorded":["pull"],"endMs":46000}"#] + Self.stuckSpinner.dropFirst()
            + [#"{"atMs":46000,"kind":"end"}"#]
        #expect(try Self.verdict(sameInHeader) == verdict, "an end line and an equal endMs agree")
    }

    @Test func anEndLineBeforeTheWatchdogEndsTheJudgingThere() throws {
        let verdict = try Self.verdict(Self.stuckSpinner + [#"{"atMs":40000,"kind":"end"}"#])
        #expect(Self.summary(verdict) == ["H11 missing refreshing 38000"], "the watchdog at 45 s is after the end: never missing")
        #expect(verdict.warnings.isEmpty)
    }

    @Test(arguments: [
        ([#"{"atMs":36000,"kind":"end"}"#, #"{"atMs":36000,"kind":"pull","type":"idle","requestId":"p1","data":{}}"#], 8, nil as String?,
         "a line after the end line (line 7)"),
        ([#"{"atMs":36000,"kind":"end"}"#, #"{"atMs":37000,"kind":"end"}"#], 8, "kind", "a second end line (the first is line 7)"),
        ([#"{"atMs":30000,"kind":"end"}"#], 7, "atMs", "atMs goes backwards"),
        ([#"{"kind":"end"}"#], 7, "atMs", "atMs is required"),
    ])
    func aMisplacedRepeatedOrEarlyEndLineIsABadTrace(_ tail: [String], _ line: Int, _ field: String?, _ detail: String) {
        #expect(throws: TraceProblem.self) { try Self.verdict(Self.stuckSpinner + tail) }
        do {
            _ = try Self.verdict(Self.stuckSpinner + tail)
        } catch {
            #expect(error.line == line && error.field == field, "\(error)")
            #expect(error.detail.hasPrefix(detail), "\(error.detail)")
        }
    }

    @Test func anEndLineThatContradictsTheHeadersEndMsIsABadTrace() {
        let lines = [#"{"todaysimTrace":1,"recorded":["pull"],"endMs":45000}"#] + Self.stuckSpinner.dropFirst()
            + [#"{"atMs":46000,"kind":"end"}"#]
        #expect(throws: TraceProblem(line: 7, field: "atMs",
                                     "the end line's atMs (46000) disagrees with the header's endMs (45000): give one, or the same time in both")) {
            try Self.verdict(lines)
        }
    }

    /// Blank lines after the end line are no lines (a file ends with a newline, or several).
    @Test func blankLinesAfterTheEndLineAreRead() throws {
        let verdict = try Self.verdict(Self.stuckSpinner + [#"{"atMs":36000,"kind":"end"}"#, "", "\r"])
        #expect(verdict.endMs == 36_000 && verdict.conforms)
    }
}

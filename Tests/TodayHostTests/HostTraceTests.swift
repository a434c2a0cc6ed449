import Testing
@testable import TodayHost

/// Issue 21, item 2: a host trace replayed against the rules in the pure core — golden traces
/// conform, the binding rules absorb a real host's ids and jitter, divergences name their rule,
/// bad traces name their line.
@Suite struct HostTraceTests {
    static let allKinds = TraceKind.allCases.map { JSON.string($0.rawValue) }

    /// The runner's whole timeline as a trace: what a conforming host records for its inputs.
    static func trace(of runner: SessionRunner, recorded: [JSON] = allKinds, toleranceMs: Int? = nil) -> [String] {
        var header: [(String, JSON)] = [("todaysimTrace", 1), ("recorded", .array(recorded)), ("endMs", .int(runner.now))]
        if let toleranceMs { header.append(("toleranceMs", .int(toleranceMs))) }
        return [JSON.object(header).serialized()] + runner.timeline.map { $0.json.serialized() }
    }

    static func verify(_ lines: [String]) throws(TraceProblem) -> Verdict {
        try HostTraceVerifier.verify(lines.joined(separator: "\n"))
    }

    /// A session of every kind of output: requests, a header, a spinner, a deadline's reload,
    /// navigation, analytics and a Web breach.
    static func busySession(id: String = "s1", platform: Platform = .ios) throws -> SessionRunner {
        var config = SessionConfig(uid: "u1")
        config.platform = platform
        var runner = try SessionRunner(id: id, config: config)
        try runner.apply(Web.loadingPresentation())
        try runner.apply(Web.firstBatch())
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 6000)
        try runner.apply(.lifecycle(.foreground(requestId: nil)))
        let foregroundId = try #require(runner.pending.first)
        try runner.apply(Web.started(foregroundId))
        try runner.advance(to: 6400)
        try runner.apply(Web.result(foregroundId))
        try runner.advance(to: 8000)
        try runner.apply(.gesture(.pull(requestId: nil)))
        try runner.advance(to: 20_000)  // unanswered: the deadline reloads, the spinner's watchdog ends it
        try runner.apply(.webEvent(["type": "track", "event": "tap", "properties": ["x": 1]]))
        try runner.apply(.lifecycle(.navigation(url: nil)))
        try runner.advance(to: 21_000)
        return runner
    }

    @Test func aGoldenTraceConforms() throws {
        let runner = try Self.busySession()
        let verdict = try Self.verify(Self.trace(of: runner))
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
        #expect(verdict.judged.first { $0.0 == .header }?.1 == 3, "refreshing, updated, hidden: \(verdict.judged)")
        #expect(verdict.endMs == 21_000)
    }

    /// The replay mints its own ids (from its own session id); binding maps the trace's.
    @Test func aTraceOfAnotherSessionIdConformsThroughBinding() throws {
        let runner = try Self.busySession(id: "a-device-session")
        let verdict = try Self.verify(Self.trace(of: runner))
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
    }

    /// Real host ids (random UUIDs) in every id field, bound while replaying.
    @Test func randomHostIdsConform() throws {
        let runner = try Self.busySession()
        var lines = Self.trace(of: runner)
        let ids = Set(runner.timeline.compactMap(\.requestId))
        for id in ids {
            let uuid = "6F1C0000-0000-4000-8000-\(String(abs(id.hashValue) % 1_000_000_000_000, radix: 10).padding(toLength: 12, withPad: "0", startingAt: 0))"
            lines = lines.map { $0.replacingOccurrences(of: id, with: uuid) }
        }
        let verdict = try Self.verify(lines)
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
    }

    /// Moves every output line whose entry matches `select` by `deltaMs` (keeping line order by
    /// time: only outputs with room before the next line are moved in these tests).
    static func shifting(_ runner: SessionRunner, by deltaMs: Int64, where select: (TimelineEntry) -> Bool) -> [String] {
        var entries = runner.timeline
        for index in entries.indices where select(entries[index]) { entries[index].atMs += deltaMs }
        entries = entries.enumerated().sorted { ($0.element.atMs, $0.offset) < ($1.element.atMs, $1.offset) }.map(\.element)
        let header: JSON = ["todaysimTrace": 1, "recorded": .array(allKinds), "endMs": .int(runner.now)]
        return [header.serialized()] + entries.map { $0.json.serialized() }
    }

    /// A real host's deadline fires 50 ms early and its reload goes with it: within 100 ms.
    @Test func aDeadlineFiring50msEarlyConforms() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(Web.loadingPresentation())
        try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
        try runner.advance(to: 8000)
        let lines = Self.shifting(runner, by: -50) { $0.atMs == 5000 }
        let verdict = try Self.verify(lines)
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")

        let late = try Self.verify(Self.shifting(runner, by: -400) { $0.atMs == 5000 })
        #expect(!late.conforms)
        let first = try #require(late.divergences.first)
        #expect(first.problem == .early && first.rule == .h9 && first.deltaMs == -400, "\(late.divergences.map(\.detail))")
    }

    /// Web answering 40 ms later than the recording's replay would: the inputs move, the
    /// outputs follow within the tolerance.
    @Test func webAnswering40msLaterConforms() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        try runner.advance(to: 300)
        try runner.apply(Web.result("t1"))
        try runner.advance(to: 3000)
        let verdict = try Self.verify(Self.shifting(runner, by: 40) { $0.atMs == 300 || $0.atMs == 1300 })
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
    }

    /// A host that does not clear its header on navigation (checklist: H14).
    @Test func aHeaderNotClearedOnNavigationIsMissingH14() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        try runner.advance(to: 500)
        try runner.apply(.lifecycle(.navigation(url: nil)))
        try runner.advance(to: 2000)
        let lines = Self.trace(of: runner).filter { !($0.contains("\"kind\":\"header\"") && $0.contains("\"atMs\":500,")) }
        let verdict = try Self.verify(lines)
        let first = try #require(verdict.divergences.first)
        #expect(first.problem == .missing && first.rule == .h14 && first.atMs == 500, "\(verdict.divergences.map(\.detail))")
    }

    /// A host that shows a cancelled result as updated (checklist: H13).
    @Test func aCancelledResultShownAsUpdatedIsH13() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("h1"))
        try runner.advance(to: 200)
        try runner.apply(Web.result("h1", "cancelled"))
        try runner.advance(to: 3000)
        let lines = Self.trace(of: runner).map { line in
            line.contains("\"kind\":\"header\"") && line.contains("\"atMs\":200,")
                ? line.replacingOccurrences(of: "\"type\":\"hidden\"", with: "\"type\":\"updated\"") : line
        }
        let verdict = try Self.verify(lines)
        // A header compares by the state it entered: `updated` where the rules hide it is an
        // output the rules do not make, and the hide they make is missing; both H13.
        let first = try #require(verdict.divergences.first)
        #expect(first.problem == .unexpected && first.rule == .h13 && first.type == "updated", "\(verdict.divergences.map(\.detail))")
        #expect(verdict.divergences.map(\.rule) == [.h13, .h13])
    }

    /// A host that asks Web to revalidate after only 4 s away (checklist: H15).
    @Test func aForegroundReturnAt4sThatRequestsIsUnexpectedH15() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 4000)
        try runner.apply(.lifecycle(.foreground(requestId: nil)))
        try runner.advance(to: 5000)
        var lines = Self.trace(of: runner)
        let request: JSON = ["seq": 99, "atMs": 4000, "kind": "emit", "type": "todayPage.refreshRequested",
                             "requestId": "6F1C-host", "data": ["payload": ["type": "todayPage.refreshRequested", "schemaVersion": 1,
                                                                        "requestId": "6F1C-host", "reason": "app_foreground"]]]
        lines.append(request.serialized())
        let verdict = try Self.verify(lines)
        let first = try #require(verdict.divergences.first)
        #expect(first.problem == .unexpected && first.rule == .h15 && first.line == lines.count, "\(verdict.divergences.map(\.detail))")
    }

    /// Only the judged kinds are compared: without `header` in `recorded`, a missing header
    /// line is no divergence.
    @Test func aKindNotRecordedIsNotCompared() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        try runner.advance(to: 3000)
        let lines = Self.trace(of: runner, recorded: ["emit", "navigation"]).filter { !$0.contains("\"kind\":\"header\"") }
        let verdict = try Self.verify(lines)
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
        #expect(verdict.judged.map(\.0) == [.emit, .navigation])
    }

    /// A trace that stops before a timer is due: the replay's outputs after `endMs` are never
    /// missing.
    @Test func aTraceThatStopsBeforeATimerConforms() throws {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(to: 4950)
        let verdict = try Self.verify(Self.trace(of: runner))
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
    }

    // MARK: Bad traces

    static let header = #"{"todaysimTrace":1,"recorded":["emit","header"]}"#
    static let creation = #"{"atMs":0,"kind":"input","type":"create","data":{"via":"create","input":{"uid":"u1"}}}"#

    static func problem(_ lines: [String]) -> TraceProblem? {
        do {
            _ = try verify(lines)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        (["{not json"], 1, nil as String?),
        ([#"{"recorded":["emit"]}"#], 1, "todaysimTrace"),
        ([#"{"todaysimTrace":2,"recorded":["emit"]}"#], 1, "todaysimTrace"),
        ([#"{"todaysimTrace":1,"recorded":["emit","spinner"]}"#], 1, "recorded"),
        ([#"{"todaysimTrace":1,"recorded":[]}"#], 1, "recorded"),
        ([#"{"todaysimTrace":1,"recorded":["emit"],"toleranceMs":20000}"#], 1, "toleranceMs"),
        ([header, #"{"atMs":0,"kind":"input","type":"pull","data":{"via":"gesture","input":{"type":"pull"}}}"#], 2, nil),
        ([header, #"{"atMs":0,"kind":"input","type":"create","data":{"via":"create","input":{"uid":""}}}"#], 2, "data.input.uid"),
        ([header, creation, #"{"kind":"emit","type":"x"}"#], 3, "atMs"),
        ([header, creation, #"{"atMs":-1,"kind":"emit","type":"x"}"#], 3, "atMs"),
        ([header, creation, #"{"atMs":1.5,"kind":"emit","type":"x"}"#], 3, "atMs"),
        ([header, creation, #"{"atMs":10,"kind":"emit","type":"x"}"#, #"{"atMs":5,"kind":"emit","type":"x"}"#], 4, "atMs"),
        ([header, creation, #"{"atMs":10,"kind":"input","type":"pull","data":{"via":"gesture","input":{"type":"fling"}}}"#], 3, nil),
        ([header, creation, #"{"atMs":10,"kind":"input","type":"x","data":{"via":"lifecycle","input":{"type":"navigation","url":"https://x/"}}}"#], 3, "data.input.url"),
        ([header, creation, #"{"atMs":10,"kind":"input","type":"teardown","data":{"via":"lifecycle","input":{"type":"teardown"}}}"#,
          #"{"atMs":11,"kind":"input","type":"pull","data":{"via":"gesture","input":{"type":"pull"}}}"#], 4, nil),
        ([#"{"todaysimTrace":1,"recorded":["emit"],"endMs":5}"#, creation, #"{"atMs":10,"kind":"emit","type":"x"}"#], 1, "endMs"),
    ])
    func aBadTraceNamesItsLine(_ lines: [String], _ line: Int, _ field: String?) {
        let problem = Self.problem(lines)
        #expect(problem?.line == line, "\(lines): \(problem.map(\.problemDetail) ?? "accepted")")
        #expect(problem?.field == field, "\(problem.map(\.problemField) ?? "-")")
        #expect(problem?.problemDetail.hasPrefix("line \(line): ") == true)
    }

    @Test func anEmptyTraceAndOneWithoutCreationAreBad() {
        #expect(Self.problem([""])?.problemDetail.contains("line 1 must be the header") == true)
        #expect(Self.problem([Self.header])?.problemDetail.contains("line 2 must be the create input") == true)
    }

    /// Outputs and inputs of kinds no one judges are skipped; blank lines and `\r\n` too.
    @Test func unjudgedLinesBlankLinesAndCRLFAreRead() throws {
        let lines = [Self.header + "\r", "", Self.creation, #"{"atMs":3,"kind":"watchdog","type":"whatever"}"#,
                     #"{"atMs":4,"kind":"input","type":"clock","data":{"via":"clock","input":{"advanceMs":4}}}"#]
        let verdict = try Self.verify(lines)
        #expect(verdict.conforms)
        #expect(verdict.endMs == 4)
    }
}

/// Issue 21 / issue 23: a trace's inputs are read as under `fieldValidation` `Warn` — each
/// unknown field is a warning with its line, and the input is replayed as if it were absent.
@Suite struct HostTraceWarningTests {
    @Test func unknownInputFieldsAreWarnedWithTheirLine() throws {
        var runner = try SessionRunner(id: "s1", config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 1000)
        var lines = HostTraceTests.trace(of: runner)
        // Line 2 is the creation, line 3 onwards the entries: find the background input.
        let index = try #require(lines.firstIndex { $0.contains(#""type":"background""#) && $0.contains(#""kind":"input""#) })
        lines[index] = lines[index].replacingOccurrences(of: #""input":{"type":"background"}"#,
                                                         with: #""input":{"type":"background","requestID":"r1"}"#)
        lines[1] = lines[1].replacingOccurrences(of: #""uid":"u1""#, with: #""uid":"u1","platfrom":"android""#)
        lines.append(#"{"atMs":1000,"kind":"input","type":"track","data":{"via":"webEvent","input":{"type":"track","event":"x","zz":1}}}"#)
        let verdict = try HostTraceTests.verify(lines)
        #expect(verdict.warnings == [
            Verdict.Warning(line: 2, field: "data.input.platfrom", detail: "unknown field; did you mean platform?"),
            Verdict.Warning(line: index + 1, field: "data.input.requestID", detail: "unknown field; background takes only type"),
        ], "a Web event's fields are Web's own (H21)")
        #expect(verdict.warningCount == 2)
        #expect(verdict.json["warningCount"] == 2)
    }
}

import Testing
@testable import TodayHost

/// Issue 44, item 6: two recordings of one scenario (iOS and Android, or two builds) compared in
/// the pure core — aligned by their inputs, each side's host ids bound to the other's, every
/// output difference named with its time on each side and its rule, beside each own verdict.
@Suite struct HostTraceComparisonTests {
    static func text(_ lines: [String]) -> String { lines.joined(separator: "\n") }

    static func compare(_ a: [String], _ b: [String], toleranceMs: Millis? = nil) throws(TracePairProblem) -> HostTraceComparison {
        try HostTraceComparison.compare(text(a), text(b), toleranceMs: toleranceMs)
    }

    @Test func oneScenarioWithOtherHostIdsIsIdentical() throws {
        // The busy session on each platform, under its own session id: the request ids its
        // server makes (H4) are its own.
        let ios = try HostTraceTests.busySession(id: "ios-run", platform: .ios)
        let android = try HostTraceTests.busySession(id: "android-run", platform: .android)
        let a = HostTraceTests.trace(of: ios), b = HostTraceBindingTests.upperCasingIds(HostTraceTests.trace(of: android), of: android)
        #expect(Set(ios.timeline.compactMap(\.requestId)).isDisjoint(with: android.timeline.compactMap(\.requestId)), "each side mints its own")
        let comparison = try Self.compare(a, b)
        #expect(comparison.identical, "\(comparison.differences.map(\.detail))")
        #expect(comparison.differenceCount == 0 && comparison.inputs == 9)
        #expect(comparison.a.conforms && comparison.b.conforms)
        #expect(comparison.compared.first { $0.0 == .header }?.1 == 3)
        #expect(comparison.notCompared.isEmpty && comparison.warnings.isEmpty)
        #expect(comparison.json["identical"] == true && comparison.json["a"]?["conforms"] == true)
    }

    /// The planted platform difference: Android asks Web to revalidate after only 4 s away.
    @Test func androidRevalidatingAfter4sIsNamedH15OnItsSide() throws {
        var runner = try SessionRunner(id: "ios-run", config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 5000)
        try runner.apply(.lifecycle(.foreground(requestId: nil)))  // 4 s away: no request (H15)
        try runner.advance(to: 8000)
        let a = HostTraceTests.trace(of: runner)
        let request: JSON = ["atMs": 5000, "kind": "emit", "type": "todayPage.refreshRequested", "requestId": "A7D2-android",
                             "data": ["payload": ["type": "todayPage.refreshRequested", "schemaVersion": 1,
                                                  "requestId": "A7D2-android", "reason": "app_foreground"]]]
        let at = try #require(a.lastIndex { $0.contains(#""atMs":5000"#) }) + 1
        var b = a
        b.insert(request.serialized(), at: at)
        let comparison = try Self.compare(a, b)
        #expect(!comparison.identical && comparison.differenceCount == 1, "\(comparison.differences.map(\.detail))")
        let difference = try #require(comparison.differences.first)
        #expect(difference.problem == .onlyB && difference.rule == .h15 && difference.side == .b)
        #expect(difference.kind == .emit && difference.type == "todayPage.refreshRequested")
        #expect(difference.a == nil && difference.b?.line == at + 1 && difference.b?.atMs == 5000)
        #expect(difference.detail.hasPrefix("H15: B recorded todayPage.refreshRequested (app_foreground) at 5000 ms"), "\(difference.detail)")
        #expect(comparison.a.conforms && !comparison.b.conforms)
        #expect(difference.json["side"] == "b" && comparison.json["identical"] == false)
    }

    /// A host whose spinner never ends: B's missing `pull idle` is only A's, and B's own verdict
    /// says it is B that breaks H11.
    @Test func aMissingPullIdleIsOnlyAsNamedH11OnTheOtherSide() throws {
        var runner = try SessionRunner(id: "r1", config: SessionConfig(uid: "u1"))
        try runner.apply(.gesture(.pull(requestId: nil)))
        let id = try #require(runner.pullId)
        try runner.advance(to: 300)
        try runner.apply(Web.result(id))
        try runner.advance(to: 2000)
        let a = HostTraceTests.trace(of: runner)
        let b = a.filter { !($0.contains(#""kind":"pull""#) && $0.contains(#""type":"idle""#)) }
        let comparison = try Self.compare(a, b)
        #expect(comparison.differenceCount == 1, "\(comparison.differences.map(\.detail))")
        let difference = try #require(comparison.differences.first)
        #expect(difference.problem == .onlyA && difference.rule == .h11 && difference.side == .b && difference.type == "idle")
        #expect(difference.a?.atMs == 300 && difference.b == nil)
        #expect(difference.detail.hasPrefix("H11: A recorded pull idle (succeeded) at 300 ms"), "\(difference.detail)")
    }

    /// One side's outputs later than the other's within the tolerance: identical; beyond it, the
    /// same outputs `apart`, with B's time minus A's.
    @Test func timeShiftsWithinTheToleranceAreIdenticalAndBeyondItApart() throws {
        var runner = try SessionRunner(id: "r1", config: SessionConfig(uid: "u1"))
        try runner.apply(Web.loadingPresentation())
        try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
        try runner.advance(to: 8000)  // unanswered: the deadline's reload at 5000 (H6, H9)
        let a = HostTraceTests.trace(of: runner)
        let within = try Self.compare(a, HostTraceTests.shifting(runner, by: 80) { $0.atMs == 5000 })
        #expect(within.identical, "\(within.differences.map(\.detail))")
        let beyond = try Self.compare(a, HostTraceTests.shifting(runner, by: 400) { $0.atMs == 5000 })
        #expect(!beyond.identical)
        let navigation = try #require(beyond.differences.first { $0.kind == .navigation }, "\(beyond.differences.map(\.detail))")
        #expect(navigation.problem == .apart && navigation.deltaMs == 400 && navigation.rule == .h9 && navigation.side == .b)
        #expect(navigation.a?.atMs == 5000 && navigation.b?.atMs == 5400)
        let wider = try Self.compare(a, HostTraceTests.shifting(runner, by: 400) { $0.atMs == 5000 }, toleranceMs: 500)
        #expect(wider.identical && wider.toleranceMs == 500 && wider.b.conforms)
    }

    /// Inputs that do not align are no comparison: the two traces record other scenarios.
    @Test func inputsOfAnotherTypeOrCountAreNotComparable() throws {
        var runner = try SessionRunner(id: "r1", config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.background))
        try runner.advance(to: 1000)
        try runner.apply(.lifecycle(.foreground(requestId: nil)))
        let a = HostTraceTests.trace(of: runner)
        let line = try #require(a.firstIndex { $0.contains(#""kind":"input","type":"foreground""#) }) + 1
        let swapped = a.map { $0.replacingOccurrences(of: #""type":"foreground""#, with: #""type":"tabActivated""#) }
        #expect(throws: TracePairProblem.notComparable(
            field: "a: line \(line); b: line \(line)",
            detail: "input 2 is lifecycle foreground at 1000 ms in A (line \(line)) and lifecycle tabActivated at 1000 ms in B (line \(line))")) {
            try Self.compare(a, swapped)
        }
        let shorter = a.filter { !$0.contains(#""kind":"input","type":"foreground""#) }
        do {
            _ = try Self.compare(a, shorter)
            Issue.record("a missing input compared")
        } catch {
            #expect(error.problemField == "a: line \(line)")
            #expect(error.problemDetail == "the traces do not record one scenario: A has 2 inputs and B 1: "
                + "A's input 2 (line \(line), lifecycle foreground at 1000 ms) has none in B")
        }
        #expect(throws: TracePairProblem.invalidTrace(.b, TraceProblem(line: 1, field: "todaysimTrace", "todaysimTrace must be 1 (this todaysim reads version 1), got 2"))) {
            try Self.compare(a, [a[0].replacingOccurrences(of: #""todaysimTrace":1"#, with: #""todaysimTrace":2"#)] + a.dropFirst())
        }
    }

    /// A trace of one rendered batch at `atMs`, Web having measured `elapsedMs`, on a session
    /// `configure` sets up.
    static func renderedBatch(at atMs: Millis = 0, elapsedMs: Int64 = 120, _ configure: (inout SessionConfig) -> Void = { _ in }) throws -> [String] {
        var config = SessionConfig(uid: "u1")
        configure(&config)
        var runner = try SessionRunner(id: "r1", config: config)
        try runner.advance(to: atMs)
        try runner.apply(.webEvent(["type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": .int(elapsedMs)]))
        try runner.advance(to: 3000)
        return HostTraceTests.trace(of: runner)
    }

    /// Another platform, another device's analytics fields and Web's own timings are no
    /// difference; inputs further apart than the tolerance and creations on other settings are
    /// warned about: they may explain a difference, they are none.
    @Test func skewedInputsAndOtherSettingsAreWarnings() throws {
        let a = try Self.renderedBatch()
        let android = try Self.renderedBatch(elapsedMs: 95) { config in
            config.platform = .android
            config.analytics = AnalyticsBase(did: "pixel-8", client_plat: "android")
        }
        let quiet = try Self.compare(a, android)
        #expect(quiet.identical && quiet.warnings.isEmpty, "\(quiet.warnings.map(\.detail)) \(quiet.differences.map(\.detail))")
        let skewed = try Self.compare(a, try Self.renderedBatch(at: 300))
        #expect(skewed.identical)
        #expect(skewed.warnings.map(\.detail) == ["input 1 (webEvent todayPage.firstBatchRendered) is at 0 ms in A and 300 ms in B, "
            + "300 ms apart (tolerance 100 ms): outputs after it may differ for that alone"])
        let german = try Self.compare(a, try Self.renderedBatch { $0.language = "de" })
        #expect(german.warnings.first?.aLine == 2 && german.warnings.first?.detail.hasPrefix("the creations differ in language (A: en; B: de)") == true,
                "\(german.warnings.map(\.detail))")
        #expect(german.differences.first?.problem == .different && german.differences.first?.rule == .h3, "\(german.differences.map(\.detail))")
    }

    /// A kind one side does not record is not compared; the rest is.
    @Test func aKindOnlyOneSideRecordsIsNotCompared() throws {
        var runner = try SessionRunner(id: "r1", config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("t1"))
        try runner.advance(to: 3000)
        let a = HostTraceTests.trace(of: runner)
        let b = HostTraceTests.trace(of: runner, recorded: ["emit", "navigation"]).filter { !$0.contains(#""kind":"header""#) }
        let comparison = try Self.compare(a, b)
        #expect(comparison.identical, "\(comparison.differences.map(\.detail))")
        #expect(comparison.compared.map(\.0) == [.emit, .navigation])
        #expect(comparison.notCompared == [.header, .pull, .overlay, .analytics, .resolution])
        #expect(comparison.junit.contains(#"<testsuites name="todaysim" tests="2" failures="0">"#), "\(comparison.junit)")
    }
}

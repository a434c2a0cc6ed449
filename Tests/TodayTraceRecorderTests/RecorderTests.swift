import Foundation
import Testing
import TodayHost
@testable import TodayTraceRecorder

/// The recorder an app copies (issue 21, item 4), driven as an app drives it: what it writes is
/// the trace format, line by line.
@Suite struct RecorderTests {
    /// A long `host` is cut to 200 Unicode scalars, as the verifier counts (not 200 characters:
    /// "é" written as e + a combining accent is one character and two scalars).
    @Test func aLongHostIsCutToTheScalarsTheVerifierTakes() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-recorder-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let host = String(repeating: "e\u{301}", count: 150)  // 150 characters, 300 scalars
        let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"], recorded: [.header], host: host, clock: { 0 })
        try recorder.close()
        let text = try String(contentsOf: url, encoding: .utf8)
        let header = try #require(try JSONSerialization.jsonObject(with: Data(text.split(separator: "\n")[0].utf8)) as? [String: Any])
        #expect((header["host"] as? String)?.unicodeScalars.count == 200)
        #expect(try HostTraceVerifier.verify(text).conforms, "the verifier reads the cut header")
        let uncut = text.replacingOccurrences(of: String(repeating: "e\u{301}", count: 100) + "\"", with: String(repeating: "e\u{301}", count: 150) + "\"")
        #expect(uncut != text)
        #expect(throws: (any Error).self, "a host of 300 scalars is refused") { try HostTraceVerifier.verify(uncut) }
    }

    @Test func itWritesTheHeaderTheCreationAndOneLinePerCall() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-recorder-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        final class Clock: @unchecked Sendable { var ms: Int64 = 1_000_000 }
        let clock = Clock()
        let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"], recorded: [.emit, .header], toleranceMs: 50,
                                                  host: "test app", clock: { clock.ms })
        clock.ms += 250
        try recorder.gesture(["type": "pull"])
        try recorder.emitted(["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "r1", "reason": "user_pull"])
        clock.ms += 100
        try recorder.header("refreshing", requestId: "r1")
        try recorder.header("refreshing", requestId: "r1")  // the same state and id again: no line
        try recorder.header("refreshing", requestId: "r2")  // another id: a line
        clock.ms -= 30  // a clock read on another thread a moment earlier: times never go back
        try recorder.webEvent(["type": "todayPage.refreshResult", "requestId": "r2", "status": "succeeded"])
        try recorder.close()
        try recorder.overlay("hidden")  // after close: nothing
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(lines.count == 8)
        #expect(lines.last?["kind"] as? String == "end" && lines.last?["atMs"] as? Int == 350 && lines.last?.count == 2,
                "close() ends the trace with its end line, at the latest time written (the clock went back)")
        #expect(lines[0]["todaysimTrace"] as? Int == 1 && lines[0]["toleranceMs"] as? Int == 50 && lines[0]["host"] as? String == "test app")
        #expect(lines[0]["recorded"] as? [String] == ["emit", "header"])
        #expect(lines[1]["type"] as? String == "create" && lines[1]["atMs"] as? Int == 0)
        #expect((lines[1]["data"] as? [String: Any])?["via"] as? String == "create")
        #expect(lines.dropFirst(2).dropLast().map { $0["atMs"] as? Int } == [250, 250, 350, 350, 350])
        #expect(lines.dropFirst(2).dropLast().map { "\($0["kind"]!) \($0["type"]!)" } == [
            "input pull", "emit todayPage.refreshRequested", "header refreshing", "header refreshing", "input todayPage.refreshResult",
        ])
        #expect((lines[2]["data"] as? [String: Any])?["via"] as? String == "gesture")
        #expect(lines[4]["requestId"] as? String == "r1" && lines[5]["requestId"] as? String == "r2")
    }

    /// Issue 44, item 1: the end line. A second `close()` writes nothing more; a recorder that is
    /// never closed writes its end line when it goes.
    @Test func closeEndsTheTraceOnceAndAnUnclosedRecorderEndsItWhenItGoes() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-recorder-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        final class Clock: @unchecked Sendable { var ms: Int64 = 0 }
        let clock = Clock()
        let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"], clock: { clock.ms })
        clock.ms = 35_000
        try recorder.close()
        clock.ms = 40_000
        try recorder.close()
        let closed = try String(contentsOf: url, encoding: .utf8)
        #expect(closed.split(separator: "\n").last == #"{"atMs":35000,"kind":"end"}"#)
        #expect(closed.split(separator: "\n").count == 3)

        do {
            let unclosed = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"], clock: { clock.ms })
            clock.ms = 52_000
            try unclosed.gesture(["type": "pull"])
            withExtendedLifetime(unclosed) { clock.ms = 60_000 }  // released after this, not at its last use
        }
        let dropped = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(dropped.count == 4 && dropped.last == #"{"atMs":20000,"kind":"end"}"#,
                "deinit ends the trace at the clock then (60,000 ms, 20,000 after the recorder was made)")
    }

    /// Issue 44, item 1: a stuck spinner cannot pass. Nothing answers the pull at 1 s: the
    /// soft-refresh deadline reloads at 6 s, the spinner follows that reload (H11), and its
    /// watchdog ends it at 13 s. A host whose spinner never ends is missing both with an end line
    /// at 35 s; cut after its last output without one, it conforms, with the warning.
    @Test func aTraceEndedAfterTheWatchdogIsMissingTheSpinnersEnd() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-recorder-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        final class Clock: @unchecked Sendable { var ms: Int64 = 0 }
        let clock = Clock()
        let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"], recorded: [.pull],
                                                  clock: { clock.ms })
        clock.ms = 1_000
        try recorder.gesture(["type": "pull", "requestId": "p1"])
        try recorder.pull("refreshing", requestId: "p1")
        clock.ms = 35_000
        try recorder.close()
        let ended = try String(contentsOf: url, encoding: .utf8)
        let verdict = try HostTraceVerifier.verify(ended)
        #expect(!verdict.conforms && verdict.endMs == 35_000)
        #expect(verdict.divergences.map { "\($0.rule.rawValue) \($0.problem.rawValue) \($0.kind.rawValue) \($0.type) \($0.atMs)" }
                == ["H11 missing pull refreshing 6000", "H11 missing pull idle 13000"])
        let cut = ended.split(separator: "\n").dropLast().joined(separator: "\n")
        let unended = try HostTraceVerifier.verify(cut)
        #expect(unended.conforms && unended.endMs == 1_000)
        #expect(unended.warnings.map(\.field) == ["end"])
        let warning = try #require(unended.warnings.first).detail
        #expect(warning.hasPrefix("no end line: timers due after line 4 (softRefreshDeadline at 6000 ms, pullWatchdog for p1 at 13000 ms"),
                "\(warning)")
    }

    /// Issue 44, item 3: a value with no JSON form is refused where it is written, naming the
    /// field, and nothing of that line is written.
    @Test func aValueThatIsNotJSONIsRefusedNamingItsField() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-recorder-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"], clock: { 0 })
        final class AppValue {}
        let refused: [(() throws -> Void, String, String)] = [
            ({ try recorder.webEvent(["type": "x", "items": [1, ["when": Date()]]]) }, "data.input.items[1].when", "Date"),
            ({ try recorder.analytics(event: "e", properties: ["value": Double.nan]) }, "data.properties.value", "non-finite Double"),
            ({ try recorder.emitted(["type": "x", "payload": [1: "one"]]) }, "data.payload.payload", "a JSON object's names must be Strings"),
            ({ try recorder.gesture(["type": "pull", "source": AppValue()]) }, "data.input.source", "AppValue"),
            ({ try recorder.resolved(type: "nativeDialog.present", callId: "c1", value: URL(fileURLWithPath: "/x")) }, "data.value", "URL"),
        ]
        for (call, path, type) in refused {
            let error = try #require(throws: TodayPageTraceRecorder.NotJSON.self) { try call() }
            #expect(error.path == path)
            #expect(error.description.contains(type), "\(error)")
        }
        let optional: String? = nil
        try recorder.webEvent(["type": "todayPage.refreshResult", "requestId": optional as Any, "status": "succeeded"])
        try recorder.close()
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4, "header, creation, the one plain line, the end line: the refused ones wrote nothing")
        #expect(lines[2].contains(#""requestId":null"#))
    }

    /// The default clock (the system's monotonic clock that counts sleep too) starts at 0 with
    /// the recorder and reads milliseconds: 50 ms or more of `CLOCK_MONOTONIC` after the recorder
    /// was made, its end line says at least 50 and at most what passed since just before it was
    /// made (never seconds' worth of nanoseconds, never 0 of seconds).
    @Test func theDefaultClockReadsMillisecondsSinceTheRecorderWasMade() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-recorder-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let before = TodayPageTraceRecorder.awakeOrAsleepMs()
        let recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1"])
        let made = TodayPageTraceRecorder.awakeOrAsleepMs()
        while TodayPageTraceRecorder.awakeOrAsleepMs() - made < 50 {}  // the condition, not a sleep
        try recorder.close()
        let passed = TodayPageTraceRecorder.awakeOrAsleepMs() - before
        let end = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").last.map(String.init) ?? ""
        let atMs = try #require(Int64(end.split(separator: ":")[1].split(separator: ",")[0]))
        #expect(atMs >= 50 && atMs <= passed, "\(end): between 50 and the \(passed) ms that passed, in milliseconds")
    }
}

import Foundation
import Testing
import TodayHost
import TodayTraceRecorder

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
        recorder.close()
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
        recorder.gesture(["type": "pull"])
        recorder.emitted(["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "r1", "reason": "user_pull"])
        clock.ms += 100
        recorder.header("refreshing", requestId: "r1")
        recorder.header("refreshing", requestId: "r1")  // the same state and id again: no line
        recorder.header("refreshing", requestId: "r2")  // another id: a line
        clock.ms -= 30  // a clock read on another thread a moment earlier: times never go back
        recorder.webEvent(["type": "todayPage.refreshResult", "requestId": "r2", "status": "succeeded"])
        recorder.close()
        recorder.overlay("hidden")  // after close: nothing
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(lines.count == 7)
        #expect(lines[0]["todaysimTrace"] as? Int == 1 && lines[0]["toleranceMs"] as? Int == 50 && lines[0]["host"] as? String == "test app")
        #expect(lines[0]["recorded"] as? [String] == ["emit", "header"])
        #expect(lines[1]["type"] as? String == "create" && lines[1]["atMs"] as? Int == 0)
        #expect((lines[1]["data"] as? [String: Any])?["via"] as? String == "create")
        #expect(lines.dropFirst(2).map { $0["atMs"] as? Int } == [250, 250, 350, 350, 350])
        #expect(lines.dropFirst(2).map { "\($0["kind"]!) \($0["type"]!)" } == [
            "input pull", "emit todayPage.refreshRequested", "header refreshing", "header refreshing", "input todayPage.refreshResult",
        ])
        #expect((lines[2]["data"] as? [String: Any])?["via"] as? String == "gesture")
        #expect(lines[4]["requestId"] as? String == "r1" && lines[5]["requestId"] as? String == "r2")
    }
}

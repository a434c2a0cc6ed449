import Foundation
import Testing
import TodayTraceRecorder

/// The recorder an app copies (issue 21, item 4), driven as an app drives it: what it writes is
/// the trace format, line by line.
@Suite struct RecorderTests {
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

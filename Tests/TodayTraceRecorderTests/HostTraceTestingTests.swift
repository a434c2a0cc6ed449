import Foundation
import Testing
import TodayHost
import TodayHostTesting
import XCTest

/// Issue 35, item 1: what an iOS test target adds (`TodayHostTesting`), as it would use it. The
/// host is `MiniHost` recording through `TodayPageTraceRecorder` as an app does; its trace is
/// judged with `expectHostTraceConforms` (Swift Testing) and `XCTAssertHostTraceConforms`
/// (XCTest): a conforming host passes, a host with a planted bug fails with its rule in the message.
enum RecordedTrace {
    /// The trace of `scenario` on a MiniHost with `bugs`, in a temporary file (removed by the caller).
    static func file(bugs: MiniHost.Bugs = [], _ scenario: PlantedBugTests.Scenario) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("host-trace-\(UUID().uuidString).jsonl")
        let host = try MiniHost(url: url, bugs: bugs)
        host.advance(to: 100)
        host.web(["type": "webView.loadingPresentation", "owner": "web", "reason": "placeholders_visible"])
        scenario(host)
        try host.recorder.close()
        return url
    }
}

@Suite struct HostTraceSwiftTestingTests {
    @Test func aConformingHostPasses() throws {
        let url = try RecordedTrace.file(PlantedBugTests.unansweredPull)
        defer { try? FileManager.default.removeItem(at: url) }
        let verdict = try expectHostTraceConforms(at: url)  // an issue here fails this test
        #expect(verdict.conforms && verdict.divergenceCount == 0)
    }

    /// The spinner outlives its 12 s watchdog (H11): the assertion records one issue, whose
    /// comment names the trace, the count, and each divergence by rule, line and time with the
    /// rules' output beside the host's.
    @Test func aPlantedHostBugFailsWithItsRule() throws {
        let url = try RecordedTrace.file(bugs: .spinnerPastWatchdog, PlantedBugTests.unansweredPull)
        defer { try? FileManager.default.removeItem(at: url) }
        let message = try #require(HostTrace.failureMessage(try HostTrace.verify(contentsOf: url), name: url.lastPathComponent))
        // The one issue the assertion records carries exactly that message (nothing else matches).
        try withKnownIssue("the planted bug: a spinner past its watchdog (H11)") {
            _ = try expectHostTraceConforms(at: url)
        } matching: { issue in
            issue.comments.map(\.rawValue) == [message]
        }
        let lines = message.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(url.lastPathComponent) does not conform to the rules: ") == true, "\(message)")
        // The spinner ends at the host's 20 s watchdog, 8 s after the rules' 12 s (the pull at 1,000 ms).
        #expect(lines.count == 3, "\(message)")
        #expect(lines.dropFirst().first == "  H11 line 14 at 21000 ms, late pull idle (+8000 ms): H11: the host recorded pull idle "
                + "(timedOut) at 21000 ms, 8000 ms after the rules' 13000 ms (tolerance 100 ms)", "\(message)")
        #expect(lines.last?.hasPrefix(#"      rules: {"type":"idle","requestId":""#) == true
                && lines.last?.contains(#"  |  host: {"type":"idle","requestId":""#) == true, "\(message)")
    }

    @Test func aTraceThatCannotBeJudgedIsThrown() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("host-trace-\(UUID().uuidString).jsonl")
        try Data("not a trace\n".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = #expect(throws: HostTrace.Unjudgeable.self) { try expectHostTraceConforms(at: url) }
        #expect(error?.description.hasPrefix("\(url.lastPathComponent) is not a trace todaysim can judge: line 1") == true,
                "\(String(describing: error))")
    }
}

/// The same with XCTest, as an XCTestCase of an app's test target writes it. A failure the
/// assertion reports is caught here (`recordFailure` overridden) so the planted bug's message
/// can be checked instead of failing this test.
final class HostTraceXCTestTests: XCTestCase {
    private var failures: [String] = []
    private var catching = false

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if catching {
            failures.append(description)
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    func testAConformingHostPasses() throws {
        let url = try RecordedTrace.file(PlantedBugTests.answeredPull)
        defer { try? FileManager.default.removeItem(at: url) }
        let verdict = try XCTAssertHostTraceConforms(at: url)  // not caught: a failure fails this test
        XCTAssertTrue(verdict.conforms)
    }

    func testAPlantedHostBugFailsWithItsRule() throws {
        let url = try RecordedTrace.file(bugs: .headerMirrorsPull, PlantedBugTests.answeredPull)
        defer { try? FileManager.default.removeItem(at: url) }
        catching = true
        let verdict = try XCTAssertHostTraceConforms(at: url, "the Today Page host")
        catching = false
        XCTAssertFalse(verdict.conforms)
        XCTAssertEqual(failures.count, 1, "\(failures)")
        let message = failures.first ?? ""
        XCTAssertTrue(message.contains("the Today Page host\n\(url.lastPathComponent) does not conform to the rules: "), message)
        XCTAssertTrue(message.contains("\n  H10 line "), message)  // a header shown for a user pull (H10)
        XCTAssertTrue(message.contains("      rules: "), message)
    }

    static let allTests = [
        ("testAConformingHostPasses", testAConformingHostPasses),
        ("testAPlantedHostBugFailsWithItsRule", testAPlantedHostBugFailsWithItsRule),
    ]
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Issue 44, item 6: two recordings of one scenario compared by `todaysim compare-traces`.
@Suite struct TraceComparisonEndpointTests {
    let cli = CLITests()

    /// One scenario on an iOS and an Android session: a pull Web never answers, so the deadline
    /// reloads once and the spinner follows the reload until its watchdog (H6, H9, H11). Each
    /// session's server-made ids are its own (H4).
    static func recordings() async throws -> (TestServer, ios: String, android: String) {
        let server = try TestServer()
        let client = Client(server: server)
        var traces: [String] = []
        for platform in ["ios", "android"] {
            try await client.create(["uid": "u1", "id": .string(platform), "platform": .string(platform)])
            _ = try await client.post("/v1/sessions/\(platform)/gestures", ["type": "pull"])
            _ = try await client.post("/v1/sessions/\(platform)/clock", ["advanceMs": 13_000])
            traces.append(try await client.get("/v1/sessions/\(platform)/timeline?format=trace").text)
        }
        return (server, traces[0], traces[1])
    }

    /// The Android host whose spinner never followed the reload and never ended (H11).
    static func spinnerLeftUp(_ trace: String) -> String {
        trace.split(separator: "\n").filter { !$0.contains(#""kind":"pull""#) || $0.contains(#""atMs":0,"#) }.joined(separator: "\n")
    }

    @Test func compareTracesAnswersWithItsExitCodes() async throws {
        let (_, ios, android) = try await Self.recordings()
        let folder = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        func file(_ name: String, _ text: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        let a = try file("ios.jsonl", ios), b = try file("android.jsonl", android)
        let same = try await cli.run(["compare-traces", a, b])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(try JSON.parse(same.stdout)["identical"] == true)

        let broken = try file("android-broken.jsonl", Self.spinnerLeftUp(android))
        let differing = try await cli.run(["compare-traces", a, broken, "--tolerance-ms", "200"])
        #expect(differing.status == 1, "\(differing.stderr)")
        let comparison = try JSON.parse(differing.stdout)
        #expect(comparison["toleranceMs"] == 200 && comparison["b"]?["toleranceMs"] == 200)
        guard case let .array(differences)? = comparison["differences"] else {
            Issue.record("no differences: \(differing.stdout)")
            return
        }
        #expect(differences.first?["rule"] == "H11" && differences.first?["side"] == "b", "\(differing.stdout)")
        let junit = try await cli.run(["compare-traces", a, broken, "--junit"])
        #expect(junit.status == 1 && junit.stdout.hasPrefix("<?xml") && junit.stdout.contains(#"type="H11""#), "\(junit.stdout)")

        let bad = try file("bad.jsonl", "{\"todaysimTrace\":1,\"recorded\":[\"emit\"]}\nnot json\n")
        let refused = try await cli.run(["compare-traces", a, bad])
        #expect(refused.status == 2)
        #expect(refused.stderr.hasPrefix("todaysim: trace B: line 2: not JSON"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        let alone = try file("alone.jsonl", ios.split(separator: "\n").filter { !$0.contains(#""kind":"input","type":"pull""#) }.joined(separator: "\n"))
        let unaligned = try await cli.run(["compare-traces", a, alone])
        #expect(unaligned.status == 2 && unaligned.stderr.hasPrefix("todaysim: the traces do not record one scenario: "), "\(unaligned.stderr)")
        for arguments in [["compare-traces"], ["compare-traces", a], ["compare-traces", a, b, b], ["compare-traces", "-", "-"],
                          ["compare-traces", a, b, "--tolerance-ms", "20000"], ["compare-traces", a, b, "--bogus"],
                          ["compare-traces", a, folder.appendingPathComponent("absent").path]] {
            #expect(try await cli.run(arguments).status == 2, "\(arguments)")
        }
    }
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Issue 21, item 3: golden traces from `GET …/timeline?format=trace`, judged by
/// `todaysim verify-host` (exit codes, JUnit, a bad trace's one line).
@Suite struct HostTraceEndpointTests {
    let cli = CLITests()

    /// A session with a request Web never answers: the deadline reloads once (H6, H9).
    static func goldenTrace() async throws -> (TestServer, String) {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull"])
        _ = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 13_000])
        let reply = try await client.get("/v1/sessions/s1/timeline?format=trace")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/x-ndjson")
        return (server, reply.text)
    }

    @Test func theTimelineAsATraceIsAGoldenTrace() async throws {
        let (server, text) = try await Self.goldenTrace()
        let lines = text.split(separator: "\n")
        let header = try JSON.parse(String(lines[0]))
        #expect(header["todaysimTrace"] == 1 && header["endMs"] == 13_000, "\(header)")
        #expect(header["recorded"] == .strings(TraceKind.allCases.map(\.rawValue)))
        let entries = try await Client(server: server).get("/v1/sessions/s1/timeline?limit=1000")
        guard case let .array(items)? = entries["entries"] else {
            Issue.record("no entries")
            return
        }
        #expect(items.count == lines.count - 1, "one line per entry after the header")
        let verdict = try HostTraceVerifier.verify(text)
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
        #expect(verdict.judged.first { $0.0 == .pull }?.1 == 3, "refreshing, following the reload, idle: \(verdict.judged)")
    }

    @Test func verifyHostAnswersWithItsExitCodes() async throws {
        let (_, text) = try await Self.goldenTrace()
        let folder = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let golden = folder.appendingPathComponent("golden.jsonl")
        try Data(text.utf8).write(to: golden)
        let conforming = try await cli.run(["verify-host", golden.path])
        #expect(conforming.status == 0, "\(conforming.stderr)")
        #expect(try JSON.parse(conforming.stdout)["conforms"] == true)

        // The host whose spinner never followed the reload and never ended: H11.
        let broken = folder.appendingPathComponent("broken.jsonl")
        let kept = text.split(separator: "\n").filter { !$0.contains("\"kind\":\"pull\"") || $0.contains("\"atMs\":0,") }
        try Data(kept.joined(separator: "\n").utf8).write(to: broken)
        let diverging = try await cli.run(["verify-host", broken.path])
        #expect(diverging.status == 1, "\(diverging.stderr)")
        let verdict = try JSON.parse(diverging.stdout)
        guard case let .array(divergences)? = verdict["divergences"] else {
            Issue.record("no divergences: \(diverging.stdout)")
            return
        }
        #expect(divergences.first?["rule"] == "H11", "\(diverging.stdout)")
        let junit = try await cli.run(["verify-host", broken.path, "--junit"])
        #expect(junit.status == 1)
        #expect(junit.stdout.hasPrefix("<?xml") && junit.stdout.contains("type=\"H11\""), "\(junit.stdout)")

        let bad = folder.appendingPathComponent("bad.jsonl")
        try Data("{\"todaysimTrace\":1,\"recorded\":[\"emit\"]}\nnot json\n".utf8).write(to: bad)
        let refused = try await cli.run(["verify-host", bad.path])
        #expect(refused.status == 2)
        #expect(refused.stderr.hasPrefix("todaysim: bad trace: line 2: not JSON"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        for arguments in [["verify-host"], ["verify-host", golden.path, "--tolerance-ms", "20000"], ["verify-host", "--bogus"],
                          ["verify-host", folder.appendingPathComponent("absent").path]] {
            #expect(try await cli.run(arguments).status == 2, "\(arguments)")
        }
    }
}

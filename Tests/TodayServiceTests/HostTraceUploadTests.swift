import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Issue 21, items 3 and 6: `POST /v1/host-traces`, the trace read as it arrives (NDJSON or a
/// JSON array), `keep`/`label`/`toleranceMs`/`format=junit`, label-bound tokens, bad traces
/// (`400` naming the line, nothing stored), the body limit, and a client that leaves mid-trace.
@Suite struct HostTraceUploadTests {
    static let ndjson = ["Content-Type": "application/x-ndjson"]

    /// The golden trace of `HostTraceEndpointTests`, and the same host whose spinner never
    /// followed the reload and never ended (H11).
    static func traces() async throws -> (TestServer, golden: String, broken: String) {
        let (server, golden) = try await HostTraceEndpointTests.goldenTrace()
        let broken = golden.split(separator: "\n").filter { !$0.contains("\"kind\":\"pull\"") || $0.contains("\"atMs\":0,") }
            .joined(separator: "\n")
        return (server, golden, broken)
    }

    static func post(_ client: Client, _ trace: String, query: String = "",
                     headers: [String: String] = ndjson) async throws -> Client.Reply {
        try await client.send("POST", "/v1/host-traces" + query, body: Array(trace.utf8), headers: headers)
    }

    static func sessionIds(_ client: Client) async throws -> [String] {
        guard case let .array(items)? = try await client.get("/v1/sessions")["sessions"] else { return [] }
        return items.compactMap { $0["id"]?.stringValue }
    }

    @Test func aPostedGoldenTraceConformsAndNothingIsStored() async throws {
        let (server, golden, _) = try await Self.traces()
        let client = Client(server: server)
        let reply = try await Self.post(client, golden)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply["conforms"] == true && reply["divergenceCount"] == 0, "\(reply.text)")
        #expect(reply["session"] == .null)
        #expect(reply.json == (try HostTraceVerifier.verify(golden)).json, "the endpoint's verdict is the library's")
        #expect(try await Self.sessionIds(client) == ["s1"], "nothing is stored without keep")
    }

    @Test func aDivergingTraceNamesItsRuleAsJSONAndAsJUnit() async throws {
        let (server, _, broken) = try await Self.traces()
        let client = Client(server: server)
        let reply = try await Self.post(client, broken)
        #expect(reply.status == 200 && reply["conforms"] == false, "\(reply.text)")
        guard case let .array(divergences)? = reply["divergences"] else {
            Issue.record("no divergences: \(reply.text)")
            return
        }
        #expect(divergences.first?["rule"] == "H11", "\(reply.text)")
        let junit = try await Self.post(client, broken, query: "?format=junit")
        #expect(junit.status == 200 && junit.header("Content-Type")?.hasPrefix("application/xml") == true)
        #expect(junit.text.hasPrefix("<?xml") && junit.text.contains("type=\"H11\""), "\(junit.text)")
        // A tolerance of its own: 10 s takes the missing spinner outputs no closer to conforming.
        let tolerant = try await Self.post(client, broken, query: "?toleranceMs=10000")
        #expect(tolerant["toleranceMs"] == 10_000 && tolerant["conforms"] == false, "\(tolerant.text)")
    }

    @Test func aJSONArrayOfTheLinesIsTheSameTrace() async throws {
        let (server, golden, broken) = try await Self.traces()
        let client = Client(server: server)
        for trace in [golden, broken] {
            let array = "[\n  " + trace.split(separator: "\n").joined(separator: ",\n  ") + "\n]"
            let asArray = try await Self.post(client, array, headers: ["Content-Type": "application/json"])
            let asLines = try await Self.post(client, trace)
            #expect(asArray.status == 200 && asArray.json == asLines.json, "\(asArray.text)")
        }
        let notArray = try await Self.post(client, golden, headers: ["Content-Type": "application/json"])
        expectProblem(notArray, 400, "invalid_trace", field: "line 1")
    }

    @Test func keepStoresTheReplayAsASessionWithItsLabel() async throws {
        let (server, golden, broken) = try await Self.traces()
        let client = Client(server: server)
        let reply = try await Self.post(client, broken, query: "?keep=replay-1&label=ios-run")
        #expect(reply.status == 200 && reply["session"] == "replay-1" && reply["conforms"] == false, "\(reply.text)")
        let view = try await client.get("/v1/sessions/replay-1")
        #expect(view.status == 200 && view["label"] == "ios-run", "\(view.text)")
        #expect(view["clock"]?["nowMs"] == 13_100, "replayed to endMs plus the tolerance: \(view.text)")
        // The replay made what the rules make: its own timeline is a golden trace of the same inputs.
        let kept = try await client.get("/v1/sessions/replay-1/timeline?format=trace")
        let verdict = try HostTraceVerifier.verify(kept.text)
        #expect(verdict.conforms, "\(verdict.divergences.map(\.detail))")
        // Outputs only: the replay's clock moves are its own (it runs on to endMs plus the tolerance).
        let outputs = { (entries: [JSON]) in entries.filter { $0["kind"] != "input" }.map { [$0["atMs"], $0["kind"], $0["type"]] } }
        let original = outputs(try await client.timeline("s1"))
        let keptEntries = try await client.timeline("replay-1")
        let replayed = outputs(Array(keptEntries.dropLast()))
        #expect(!original.isEmpty && replayed == original, "the kept replay made the outputs of the session the trace came from")
        // Its last entry is the verdict (without `session`); each divergence's replaySeq is the
        // kept entry it expected, where the dashboard marks it.
        let last = keptEntries.last
        #expect(last?["kind"] == "verdict" && last?["type"] == "diverges" && last?["rule"] == nil, "\(String(describing: last))")
        #expect(last?["data"]?["divergences"] == reply["divergences"] && last?["data"]?["divergenceCount"] == reply["divergenceCount"]
            && last?["data"]?["session"] == nil, "\(String(describing: last))")
        guard case let .array(divergences)? = reply["divergences"], !divergences.isEmpty else {
            Issue.record("no divergences: \(reply.text)")
            return
        }
        for divergence in divergences {
            let seq = divergence["replaySeq"]?.int64Value
            let expected = keptEntries.first { $0["seq"]?.int64Value == seq }
            #expect(seq != nil && expected?["kind"] == divergence["kind"] && expected?["type"] == divergence["type"]
                && expected?["atMs"] == divergence["atMs"], "\(divergence) → \(String(describing: expected))")
        }
        // Forkable and removable as any session.
        #expect(try await client.post("/v1/sessions/replay-1/fork", ["id": "replay-1b"]).status == 201)
        // Its id is now taken.
        let again = try await Self.post(client, golden, query: "?keep=replay-1")
        expectProblem(again, 409, "session_exists")
    }

    @Test func aBadTraceIsRefusedNamingItsLineAndKeepsNothing() async throws {
        let (server, golden, _) = try await Self.traces()
        let client = Client(server: server)
        var lines = golden.split(separator: "\n").map(String.init)
        lines.insert("not json", at: 4)
        let reply = try await Self.post(client, lines.joined(separator: "\n"), query: "?keep=bad-1")
        expectProblem(reply, 400, "invalid_trace", field: "line 5")
        #expect(reply["detail"]?.stringValue?.hasPrefix("line 5: not JSON") == true, "\(reply.text)")
        #expect(try await client.get("/v1/sessions/bad-1").status == 404, "nothing of a bad trace is stored")
        // Backwards in time, and an input after a teardown.
        var backwards = golden.split(separator: "\n").map(String.init)
        backwards.append(#"{"atMs":5,"kind":"input","type":"pull","data":{"via":"gesture","input":{"type":"pull"}}}"#)
        let late = try await Self.post(client, backwards.joined(separator: "\n"))
        expectProblem(late, 400, "invalid_trace", field: "line \(backwards.count): atMs")
        // curl -d strips the newlines and sends a form: the answer says so.
        let flattened = try await Self.post(client, golden.replacingOccurrences(of: "\n", with: ""),
                                            headers: ["Content-Type": "application/x-www-form-urlencoded"])
        expectProblem(flattened, 400, "invalid_trace", field: "line 1")
        #expect(flattened["detail"]?.stringValue?.contains("--data-binary") == true, "\(flattened.text)")
        #expect(try await Self.sessionIds(client) == ["s1"])
    }

    @Test func whatTheHeadSaysIsAnsweredBeforeTheBody() async throws {
        let (server, golden, _) = try await Self.traces()
        let client = Client(server: server)
        for (query, field) in [("?toleranceMs=20000", "toleranceMs"), ("?toleranceMs=-1", "toleranceMs"), ("?keep=no%20spaces", "keep"),
                               ("?label=x", "label"), ("?format=xml", "format")] {
            expectProblem(try await Self.post(client, golden, query: query), 400, "invalid_field", field: field)
        }
        expectProblem(try await Self.post(client, golden, query: "?keep=s1"), 409, "session_exists")
        let png = try await Self.post(client, golden, headers: ["Content-Type": "image/png"])
        expectProblem(png, 415, "unsupported_media_type")
        let latin = try await Self.post(client, golden, headers: ["Content-Type": "application/x-ndjson; charset=latin1"])
        expectProblem(latin, 415, "unsupported_media_type")
        let get = try await client.get("/v1/host-traces")
        expectProblem(get, 405, "method_not_allowed")
    }

    @Test func aLabelBoundTokenKeepsReplaysInItsLabel() async throws {
        let (source, golden, _) = try await Self.traces()
        _ = source
        let server = try TestServer(labelTokens: [("token-a", "team-a")])
        let client = Client(server: server)
        let bearer = ["Content-Type": "application/x-ndjson", "Authorization": "Bearer token-a"]
        let kept = try await Self.post(client, golden, query: "?keep=k1", headers: bearer)
        #expect(kept.status == 200 && kept["session"] == "k1", "\(kept.text)")
        let view = try await client.send("GET", "/v1/sessions/k1", headers: ["Authorization": "Bearer token-a"])
        #expect(view["label"] == "team-a", "\(view.text)")
        expectProblem(try await Self.post(client, golden, query: "?keep=k2&label=team-b", headers: bearer), 400, "invalid_field", field: "label")
        let anonymous = try await Self.post(client, golden, query: "?keep=k3")
        #expect(anonymous.status == 401, "\(anonymous.text)")
        #expect(try await client.send("GET", "/v1/sessions/k3", headers: ["Authorization": "Bearer token-a"]).status == 404)
    }

    @Test func aBodyPastTheLimitIsRefused413() async throws {
        let server = try TestServer(traceLimit: 4096)
        let client = Client(server: server)
        let header = #"{"todaysimTrace":1,"recorded":["emit"]}"#
        let big = ([header] + Array(repeating: #"{"atMs":0,"kind":"emit","type":"x"}"#, count: 200)).joined(separator: "\n")
        let reply = try await Self.post(client, big)
        expectProblem(reply, 413, "payload_too_large")
        // Under the limit the same server judges (here: a bad trace, line 2 not a creation).
        let small = try await Self.post(client, [header, #"{"atMs":0,"kind":"emit","type":"x"}"#].joined(separator: "\n"))
        expectProblem(small, 400, "invalid_trace", field: "line 2")
    }

    /// A client that leaves halfway through a kept trace: nothing appears, the id stays free,
    /// and the server goes on serving.
    @Test func aClientLeavingMidTraceLeavesNothing() async throws {
        let (server, golden, _) = try await Self.traces()
        let client = Client(server: server)
        let bytes = Array(golden.utf8)
        let half = bytes.prefix(bytes.count / 2)
        let connection = try RawConnection(port: server.server!.port)
        connection.send("POST /v1/host-traces?keep=left HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: \(bytes.count)\r\n\r\n")
        connection.send(Array(half))
        // The replay was begun (its hidden row made) once the creation line was read.
        #expect(await eventually(within: 60) { (server.store?.hiddenRowsForTesting ?? 0) > 0 }, "the server began keeping the replay")
        connection.hangUp()
        #expect(await eventually(within: 60) { server.store?.hiddenRowsForTesting == 0 }, "the abandoned replay is removed")
        #expect(try await client.get("/v1/sessions/left").status == 404)
        let kept = try await Self.post(client, golden, query: "?keep=left")
        #expect(kept.status == 200 && kept["session"] == "left", "the id was never taken: \(kept.text)")
    }
}

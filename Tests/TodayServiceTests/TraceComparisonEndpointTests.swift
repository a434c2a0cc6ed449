import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Issue 44, item 6: two recordings of one scenario compared over HTTP
/// (`POST /v1/host-traces/compare`, JSON or multipart) and by `todaysim compare-traces`.
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

    static func multipart(_ parts: [(String, String?, String)]) -> (body: [UInt8], contentType: String) {
        let boundary = "todaysim-test-7f3a"
        var body = ""
        for (name, type, content) in parts {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(name).jsonl\"\r\n"
            if let type { body += "Content-Type: \(type)\r\n" }
            body += "\r\n\(content)\r\n"
        }
        body += "--\(boundary)--\r\n"
        return (Array(body.utf8), "multipart/form-data; boundary=\(boundary)")
    }

    @Test func twoRecordingsCompareOverJSONAndMultipart() async throws {
        let (server, ios, android) = try await Self.recordings()
        let client = Client(server: server)
        let validator = try SchemaValidator(document: try YAMLSubset.parse(try OpenAPIDocumentTests.document()))

        let identical = try await client.post("/v1/host-traces/compare", ["a": .string(ios), "b": .string(android)])
        #expect(identical.status == 200, "\(identical.text)")
        #expect(identical["identical"] == true && identical["differenceCount"] == 0, "\(identical.text)")
        #expect(identical["a"]?["conforms"] == true && identical["b"]?["host"]?.stringValue?.hasSuffix("session android") == true)
        #expect(try validator.problems(identical.json, against: "TraceComparison") == [])

        // A as the array of its lines, B with the spinner left up: B's own fault, H11.
        let lines = try ios.split(separator: "\n").map { try JSON.parse(String($0)) }
        let broken = try await client.post("/v1/host-traces/compare", ["a": .array(lines), "b": .string(Self.spinnerLeftUp(android))])
        #expect(broken.status == 200 && broken["identical"] == false, "\(broken.text)")
        guard case let .array(differences)? = broken["differences"], let first = differences.first else {
            Issue.record("no differences: \(broken.text)")
            return
        }
        #expect(first["problem"] == "onlyA" && first["rule"] == "H11" && first["side"] == "b", "\(broken.text)")
        #expect(first["a"]?["line"] != nil && first["b"] == nil)
        #expect(try validator.problems(broken.json, against: "TraceComparison") == [])

        let (body, contentType) = Self.multipart([("a", nil, ios), ("b", "application/x-ndjson", Self.spinnerLeftUp(android)),
                                                  ("toleranceMs", nil, "100")])
        let form = try await client.send("POST", "/v1/host-traces/compare", body: body, headers: ["Content-Type": contentType])
        #expect(form.status == 200 && form["differenceCount"] == broken["differenceCount"], "\(form.text)")
        let junit = try await client.send("POST", "/v1/host-traces/compare?format=junit", body: body, headers: ["Content-Type": contentType])
        #expect(junit.status == 200 && junit.header("Content-Type")?.hasPrefix("application/xml") == true)
        #expect(junit.text.hasPrefix("<?xml") && junit.text.contains(#"type="H11""#), "\(junit.text)")
    }

    @Test func aPairThatCannotBeComparedIsAProblem() async throws {
        let (server, ios, android) = try await Self.recordings()
        let client = Client(server: server)
        var badB = android.split(separator: "\n").map(String.init)
        badB[2] = badB[2].replacingOccurrences(of: #""atMs":0"#, with: #""atMs":-1"#)
        let bad = try await client.post("/v1/host-traces/compare", ["a": .string(ios), "b": .string(badB.joined(separator: "\n"))])
        expectProblem(bad, 400, "invalid_trace", field: "b: line 3: atMs")
        #expect(bad["detail"]?.stringValue?.hasPrefix("trace B: line 3: atMs must be") == true, "\(bad.text)")
        let noInputs = ios.split(separator: "\n").filter { !$0.contains(#""kind":"input","type":"pull""#) }.joined(separator: "\n")
        let unaligned = try await client.post("/v1/host-traces/compare", ["a": .string(ios), "b": .string(noInputs)])
        expectProblem(unaligned, 400, "traces_not_comparable", field: "a: line \(Self.firstLine(of: ios, containing: #""type":"pull""#))")
        #expect(unaligned["detail"]?.stringValue?.hasPrefix("the traces do not record one scenario: A has 1 input and B 0") == true, "\(unaligned.text)")
        expectProblem(try await client.post("/v1/host-traces/compare", ["a": .string(ios)]), 400, "invalid_field", field: "b")
        expectProblem(try await client.post("/v1/host-traces/compare", ["a": .string(ios), "b": .string(ios), "tolerance": 5]),
                      400, "invalid_field", field: "tolerance")
        expectProblem(try await client.post("/v1/host-traces/compare?toleranceMs=20000", ["a": .string(ios), "b": .string(ios)]),
                      400, "invalid_field", field: "toleranceMs")
        expectProblem(try await client.send("POST", "/v1/host-traces/compare", body: Array(ios.utf8), headers: ["Content-Type": "application/x-ndjson"]),
                      415, "unsupported_media_type")
        let (body, contentType) = Self.multipart([("a", nil, ios)])
        expectProblem(try await client.send("POST", "/v1/host-traces/compare", body: body, headers: ["Content-Type": contentType]),
                      400, "invalid_field", field: "b")
        // Over 32 MiB is refused from the head, before the body is read.
        let tooLarge = try await client.answer(toHead: "POST /v1/host-traces/compare HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Content-Type: application/json\r\nContent-Length: \((32 << 20) + 1)\r\n\r\n")
        expectProblem(tooLarge, 413, "payload_too_large")
    }

    static func firstLine(of trace: String, containing text: String) -> Int {
        (trace.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(text) } ?? -1) + 1
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

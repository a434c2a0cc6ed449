import Foundation
import Testing
import TodayHost
import TodayTestSupport
import TodayTraceProperties

/// Issue 33, item 2, over HTTP: one in 20 of the property run's random sessions
/// (`TraceVerdictPropertyTests`, the same `TODAYSIM_TRACE_SEED`) is driven input by input through
/// a real server; its `timeline?format=trace` is the trace the engine writes, verifies clean
/// offline and through `POST /v1/host-traces`, and so does the same trace as a real host records
/// it.
@Suite struct TraceVerdictOverHTTPTests {
    static let run = TracePropertyRun.shared

    @Test func oneInTwentyRandomSessionsConformOverHTTP() async throws {
        let run = Self.run
        let indices = Array(stride(from: 0, to: run.sessions, by: 20))
        print("TraceVerdictOverHTTPTests: seed \(run.seed) (TODAYSIM_TRACE_SEED=\(run.seed)), \(indices.count) sessions over HTTP")
        let server = try TestServer()
        let client = Client(server: server)
        var inputsSent = 0
        for index in indices {
            let scenario = run.scenario(index)
            let local = scenario.run()
            let id = scenario.sessionId
            var creation = local.timeline[0].data["input"] ?? .object([])
            if case var .object(members) = creation {
                members.removeAll { $0.0 == "id" || $0.0 == "label" }
                creation = .object([("id", .string(id))] + members)
            }
            try await client.create(creation)
            for step in scenario.steps {
                let (path, body) = step.endpoint
                let reply = try await client.post("/v1/sessions/\(id)/\(path)", body)
                inputsSent += 1
                #expect(reply.status == 200 || reply.status == 400 || reply.status == 409, "\(path) \(body.serialized()): \(reply.text)")
            }
            let reply = try await client.get("/v1/sessions/\(id)/timeline?format=trace")
            #expect(reply.status == 200)
            let served = reply.text
            let golden = TraceText.golden(local)
            #expect(served.split(separator: "\n").count == golden.lines.count,
                    "session seed \(scenario.seed): the server's trace has the engine's lines")
            let verdict = try HostTraceVerifier.verify(served, sessionId: "replay")
            #expect(verdict.conforms, "session seed \(scenario.seed): \(verdict.divergences.prefix(3).map(\.detail))")

            var rng = SeededRandom(seed: scenario.seed)
            let host = HostRecording(of: local, rng: &rng).trace
            for (name, body) in [("served", served), ("as a host records it", host.text)] {
                let judged = try await client.send("POST", "/v1/host-traces", body: Array(body.utf8),
                                                   headers: ["Content-Type": "application/x-ndjson"])
                #expect(judged.status == 200 && judged["conforms"] == true,
                        "session seed \(scenario.seed), \(name): \(judged.text.prefix(600))")
            }
        }
        #expect(inputsSent >= 4 * indices.count, "\(inputsSent) inputs over HTTP")
    }
}

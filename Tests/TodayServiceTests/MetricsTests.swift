import Foundation
import Testing
import TodayHost
import TodayStore

/// `GET /metrics`: Prometheus text that moves when requests are made.
@Suite struct MetricsTests {
    /// The value of one sample line (`name{labels} value`), or nil.
    func sample(_ text: String, _ prefix: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    @Test func metricsMoveWithRequestsInputsTimersAndViolations() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "tabActivated"])
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "foreground"])  // ignored
        _ = try await client.post("/v1/sessions/s1/clock", ["advanceMs": 5000])  // deadline: M7
        _ = try await client.get("/v1/sessions/nobody")
        try await client.create(["uid": "u2", "id": "s2"])
        try await client.tearDown("s2")

        let reply = try await client.get("/metrics")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true)
        let text = reply.text
        #expect(sample(text, #"todaysim_inputs_total{via="lifecycle",outcome="applied"}"#) == 2, "the tab activation and the teardown")
        #expect(sample(text, #"todaysim_inputs_total{via="lifecycle",outcome="ignored"}"#) == 1)
        #expect(sample(text, #"todaysim_inputs_total{via="create",outcome="applied"}"#) == 2)
        #expect(sample(text, #"todaysim_watchdogs_fired_total{kind="softRefreshDeadline"}"#) == 1)
        #expect(sample(text, #"todaysim_violations_total{code="M7"}"#) == 1)
        #expect(sample(text, #"todaysim_sessions{status="active"}"#) == 1)
        #expect(sample(text, #"todaysim_sessions{status="closed"}"#) == 1)
        #expect(sample(text, #"todaysim_http_requests_total{route="/v1/sessions/{id}",method="GET",status="404"}"#) == 1)
        #expect(sample(text, #"todaysim_http_requests_total{route="/v1/sessions/{id}/lifecycle",method="POST",status="200"}"#) == 3)
        #expect((sample(text, "todaysim_store_commit_seconds_count") ?? 0) >= 4)
        #expect(text.contains(#"todaysim_http_request_duration_seconds_bucket{route="/v1/sessions",le="+Inf"}"#))

        _ = try await client.get("/healthz")
        let later = try await client.get("/metrics").text
        #expect(sample(later, #"todaysim_http_requests_total{route="/healthz",method="GET",status="200"}"#) == 1)
        #expect(sample(later, #"todaysim_http_requests_total{route="/metrics",method="GET",status="200"}"#) == 1)
    }

    /// A label value is escaped as the text format asks (backslash, double quote, line feed),
    /// and one with none of them, every route and method, comes back as it was.
    @Test func labelValuesAreEscapedOnlyWhereTheFormatAsks() {
        #expect(Metrics.label("/v1/sessions/{id}/web-events") == "/v1/sessions/{id}/web-events")
        #expect(Metrics.label("") == "")
        #expect(Metrics.label(#"a\b"#) == #"a\\b"#)
        #expect(Metrics.label(#"say "hi""#) == #"say \"hi\""#)
        #expect(Metrics.label("one\ntwo") == #"one\ntwo"#)
        #expect(Metrics.label("\\\"\n") == #"\\\"\n"#)
        #expect(Metrics.label("é\"") == #"é\""#)
    }
}

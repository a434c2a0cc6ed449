import Foundation
import Testing
import TodayHost
import TodayServer
import TodayStore
import TodayTestSupport

/// Stopping under load (issue 12, item 2): libmicrohttpd aborts the process when its daemon is
/// stopped with a connection suspended, and a kept-alive connection may send a request at any
/// moment until then. The whole loop (SIGTERM at random moments under four writers, a long
/// poll and a stream) is `systemtests/test_sigterm.py`; these pin the two mechanisms down.
@Suite struct ShutdownTests {
    /// A long poll on a fresh session's timeline, parked (waiting for an entry that never comes).
    private func parkedLongPoll(on server: TestServer) async throws -> RawConnection {
        try await Client(server: server).create(["uid": "u1", "id": "s1"])
        let last = try await Client(server: server).timeline("s1").last?["seq"]?.int64Value ?? 0
        let connection = try RawConnection(port: server.server!.port)
        connection.send("GET /v1/sessions/s1/timeline?after=\(last)&waitMs=\(WaitTests.longWaitMs) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { server.service!.waiters.count == 1 }, "the long poll never parked")
        return connection
    }

    @Test func aKeptAliveConnectionsNextRequestAfterTheStopBeganIsRefusedAndClosed() async throws {
        let server = try TestServer(longestWaitMs: WaitTests.longWaitMs)
        try await Client(server: server).create(["uid": "u1", "id": "s1"])
        let connection = try RawConnection(port: server.server!.port)
        let input = "POST /v1/sessions/s1/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"advanceMs\":100}"
        connection.send(input)
        let first = try #require(await connection.readAnswer())
        #expect(first.status == 200 && !first.closes, "the first input is answered on a kept-alive connection")

        server.server!.beginStopping()
        connection.send(input)
        let refused = try #require(await connection.readAnswer(), "a request after the stop began got no answer")
        #expect(refused.status == 503)
        #expect(refused.json["code"] == "shutting_down", "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.closes, "the refusal closes the connection: \(refused.headers)")
        #expect(refused.headers["retry-after"] == "1")
        #expect(await connection.closedByServer(), "the server keeps the connection open after refusing")

        try server.restart()
        let view = try await Client(server: server).get("/v1/sessions/s1")
        #expect(view["version"] == 2, "only the first input is applied: \(view.text)")
    }

    @Test func aRequestInFlightWhenTheStopBeginsIsAnsweredAndItsConnectionClosed() async throws {
        let server = try TestServer(longestWaitMs: WaitTests.longWaitMs)
        let connection = try await parkedLongPoll(on: server)

        server.server!.beginStopping()
        server.service!.stop()
        let answer = try #require(await connection.readAnswer(), "the parked long poll got no answer at the stop")
        #expect(answer.status == 200, "a request in flight is finished, not refused")
        #expect(answer.closes, "an answer made while stopping keeps its connection open: \(answer.headers)")
        server.server!.stop()
    }

    /// Without the drain, `MHD_stop_daemon` aborted the test process here ("called while we
    /// have suspended connections").
    @Test func realTimeARequestStillParkedWhenTheGraceEndsIsAnswered503AndTheDaemonStops() async throws {
        let server = try TestServer(longestWaitMs: WaitTests.longWaitMs)
        let connection = try await parkedLongPoll(on: server)

        // The service is not stopped, so nothing releases the long poll: it is still parked
        // when the grace ends.
        let began = Date()
        server.server!.stop(grace: 0.3)
        // Bounded, not timed: a stop that waited for the long poll's 30 s would pass 120 s only
        // on a machine no healthy run is on; the grace is 0.3 s.
        #expect(Date().timeIntervalSince(began) < 120, "the stop is bounded")
        let answer = try #require(await connection.readAnswer(), "the parked long poll got no answer at the stop")
        #expect(answer.status == 503)
        #expect(answer.json["code"] == "shutting_down", "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(server.logLines.all.contains { $0.contains("1 parked requests were not ready") }, "\(server.logLines.all)")
    }

    /// The drain's grace on the test's clock (issue 24, item 3): the stop waits for the parked
    /// long poll until the clock passes its grace, then answers it 503 — moved, not raced. The
    /// grace is an hour, so a drain that waited on real time could not pass.
    @Test func aRequestStillParkedIsAnswered503WhenTheGracePassesOnTheTestsClock() async throws {
        let clock = ManualTime()
        let server = try TestServer(longestWaitMs: WaitTests.longWaitMs, clock: clock)
        let connection = try await parkedLongPoll(on: server)
        let stopped = await Self.stopPastAnHoursGrace(try #require(server.server), on: clock)
        let answer = try #require(await connection.readAnswer(), "the parked long poll got no answer when the grace passed")
        #expect(answer.status == 503)
        #expect(answer.json["code"] == "shutting_down", "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(await eventually { stopped.isSet }, "the stop did not end after its grace")
    }

    /// Stops `http` with an hour's grace on a thread of its own, and once its drain waits on
    /// `clock`, moves the clock past the grace; the flag is set when the stop returns.
    static func stopPastAnHoursGrace(_ http: HTTPServer, on clock: ManualTime,
                                     sourceLocation: SourceLocation = #_sourceLocation) async -> Flag {
        let waitsBefore = clock.waits
        let stopped = Flag()
        Thread.detachNewThread {
            http.stop(grace: 3600)
            stopped.set()
        }
        #expect(await eventually { clock.waits > waitsBefore }, "the stop's drain never waited on the clock",
                sourceLocation: sourceLocation)
        clock.move(by: 3_600_000)
        return stopped
    }
}

import Foundation
import Testing
import TodayTestSupport

/// Draining behind a load balancer (issue 15, item 5): at SIGTERM the listening socket closes
/// at once, so nginx's new connections are refused and go to another replica, while the
/// requests already in flight on this one are still answered.
@Suite struct DrainTests {
    /// Whether a new TCP connection to `port` is refused by the kernel (nothing listens).
    func isRefused(_ port: Int) -> Bool {
        do {
            _ = try RawConnection(port: port)
            return false
        } catch let error as POSIXError {
            return error.code == .ECONNREFUSED
        } catch {
            return false
        }
    }

    @Test func afterSIGTERMNewConnectionsAreRefusedWhileARequestInFlightIsAnswered() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-drain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A drain far longer than the test's steps: the request in flight is answered because the
        // server waits for it, not because this test sent its body before a 5 s window closed.
        // Nor is it cut by the request deadline while its body is awaited.
        let server = try await ServedBinary(["--db", directory.appendingPathComponent("drain.sqlite").path, "--drain-seconds", "600",
                                             "--connection-timeout-seconds", "3600"])
        let port = server.port
        #expect(try await server.answer("POST", "/v1/sessions", body: "{\"uid\":\"u1\",\"id\":\"s1\"}")?.status == 201)

        // A request in flight: its headers are in (libmicrohttpd says 100 Continue only after
        // handing them to the server), its body not yet, so the stop waits for it.
        let input = "{\"advanceMs\":100}"
        let inFlight = try RawConnection(port: port)
        inFlight.send("POST /v1/sessions/s1/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Expect: 100-continue\r\nContent-Length: \(input.utf8.count)\r\n\r\n")
        #expect(await inFlight.readAnswer()?.status == 100, "the server did not take the request's headers")

        server.process.signal(SIGTERM)
        #expect(await eventually(within: 120) { isRefused(port) }, "new connections are still accepted while the server drains")
        inFlight.send(input)
        let answer = try #require(await inFlight.readAnswer(timeout: 120), "the request in flight at SIGTERM was not answered")
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.closes, "an answer made while stopping keeps its connection open: \(answer.headers)")
        #expect(await server.process.ended(within: 120) == 0, "\(server.errors.all)")
    }

    /// Near libmicrohttpd's own connection limit, replacing the listening socket could make it
    /// abort the process (see `ListenerClosing`): the socket stays open as before the change,
    /// and a connection made meanwhile is accepted and refused `503`.
    @Test func nearTheConnectionLimitTheListeningSocketStaysOpenUntilTheDaemonStops() async throws {
        // 3 served + 16 of room: 19 for libmicrohttpd, 9 for each of the test server's 2 workers.
        // Idle connections are never cut while the test runs: with the default 30 s deadline a
        // test task starved on a loaded machine found them closed, libmicrohttpd below its limit,
        // and the listening socket replaced (the late connection refused, not answered 503).
        let server = try TestServer(maxConnections: 3, connectionTimeout: 3600)
        let port = server.server!.port
        var held: [RawConnection] = []
        // Idle connections: held open (a request past the server's limit of 3 would close them).
        for _ in 0..<8 { held.append(try RawConnection(port: port)) }
        #expect(await eventually(within: 120) { server.server!.openConnections == 8 }, "libmicrohttpd holds \(server.server!.openConnections)")
        server.server!.beginStopping()
        #expect(server.logLines.all.contains { $0.contains("the listening socket stays open") }, "\(server.logLines.all)")
        let late = try RawConnection(port: port)
        late.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await late.readAnswer()?.status == 503, "a connection made while stopping is not refused 503")
        server.stop()
    }

    /// Issue 33, item 3: SIGTERM while a host trace is being judged. The client sends the trace's
    /// first lines and holds the rest, so the judgement cannot end within the drain (1 s): the
    /// upload is answered `503` when the drain ends, midway through its body, and the server
    /// exits 0.
    @Test func realTimeAnUploadBeingJudgedAtSIGTERMIsAnswered503WhenTheDrainEndsAndTheServerExits0() async throws {
        let server = try await ServedBinary(["--db", ":memory:", "--drain-seconds", "1", "--connection-timeout-seconds", "3600"])
        let lines = #"{"todaysimTrace":1,"recorded":["emit"]}"# + "\n"
            + #"{"atMs":0,"kind":"input","type":"create","data":{"via":"create","input":{"uid":"u1"}}}"# + "\n"
        let upload = try RawConnection(port: server.port)
        upload.send("POST /v1/host-traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
            + "Content-Length: \(1 << 20)\r\n\r\n" + lines)
        let judging = #"todaysim_trace_judgements{state="judging"} 1"#
        #expect(await eventually {
            guard let metrics = try? await server.answer("GET", "/metrics") else { return false }
            return String(decoding: metrics.body, as: UTF8.self).contains(judging)
        }, "the server never reported the judgement in flight")

        server.process.signal(SIGTERM)
        let answer = try #require(await upload.readAnswer(timeout: 120), "the upload in flight at SIGTERM was not answered")
        #expect(answer.status == 503 && answer.json["code"] == "shutting_down", "\(answer)")
        #expect(answer.headers["content-type"] == "application/problem+json" && answer.closes, "\(answer.headers)")
        #expect(await server.process.ended(within: 120) == 0, "\(server.errors.all)")
        #expect(server.errors.all.contains("1 parked requests were not ready"), "\(server.errors.all)")
    }
}

import Foundation
import Testing
import TodayHost
@testable import TodayServer
import TodayStore
import TodayTestSupport

/// Issue 33, item 3: a streamed body (`POST /v1/host-traces`) is taken on the `SinkPool`, never
/// on the HTTP worker that reads it; a body beyond the pool waits its turn at its head; a
/// parked connection is still held to its deadline, and a client that leaves frees its place.
/// A sink that holds its first piece stands for a slow judge: the test decides when it is done.
@Suite struct JudgingPoolTests {
    typealias HeldSink = StreamedBodyDeadlineTests.HeldSink

    /// One HTTP worker (what it serves meanwhile shows it is not judging), a pool of one judge;
    /// `/upload/NAME` streams into `sinks[NAME]`. The silence limit is an hour and judging is
    /// excused without end: a piece held on purpose, however long a loaded runner takes to let
    /// it go, is neither a silent client nor a slow one.
    static func server(sinks: [String: HeldSink], pool: SinkPool, deadline: TimeInterval = 600,
                       clock: ManualTime? = nil, log: RequestLog = RequestLog(enabled: false)) throws -> HTTPServer {
        try HTTPServer(host: "127.0.0.1", port: 0, threads: 1, connectionTimeout: 3600, judgingAllowance: .infinity,
                       requestDeadline: deadline, log: log, time: clock ?? SystemTime(), sinks: pool,
                       bodyHandling: { request in
                           guard request.path.hasPrefix("/upload/"), let sink = sinks[String(request.path.dropFirst(8))] else { return .whole }
                           return .streamed(sink, routeName: "upload")
                       },
                       respond: { _ in (.json(["whole": true]), routeName: "other") })
    }

    static func head(_ name: String, length: Int, expectContinue: Bool = false) -> String {
        "POST /upload/\(name) HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n"
            + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n"
    }

    static let body = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)

    /// An upload whose first 1,000 bytes the sink holds.
    static func heldUpload(_ name: String, on server: HTTPServer, sink: HeldSink) async throws -> RawConnection {
        let connection = try RawConnection(port: server.port)
        connection.send(head(name, length: body.count))
        connection.send(Array(body[..<1000]))
        let entered = await offThePool { sink.entered.wait(timeout: .now() + 300) == .success }
        #expect(entered, "the sink never got the first piece")
        return connection
    }

    @Test func aPieceIsTakenOnThePoolWhileTheOnlyWorkerServesOtherRequests() async throws {
        let sink = HeldSink()
        let pool = SinkPool(threads: 1)
        let server = try Self.server(sinks: ["a": sink], pool: pool)
        defer { server.stop(grace: 0) }
        let upload = try await Self.heldUpload("a", on: server, sink: sink)
        // The one worker answers another connection while the piece is held.
        let other = try RawConnection(port: server.port)
        other.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await other.readAnswer()?.status == 200, "the worker waited for the sink")
        #expect(pool.counts.taking == 1)
        upload.send(Array(Self.body[1000...]))  // in the socket before the piece is let go: no race with the deadline
        sink.release.signal()
        let answer = await upload.readAnswer()
        #expect(answer?.status == 200 && answer?.json["received"] == 3000, "\(String(describing: answer))")
        // The pool's threads run at nice +10, the HTTP workers at the server's own 0.
        #expect(sink.takenAtNice == [10], "taken at nice \(sink.takenAtNice)")
        #expect(await eventually { pool.counts == (0, 0) }, "the place was not given back")
    }

    @Test func anUploadBeyondThePoolWaitsItsTurnAndIsThenJudged() async throws {
        let first = HeldSink(), second = HeldSink()
        second.release.signal()  // the second goes straight through once it has a place
        let pool = SinkPool(threads: 1)
        let server = try Self.server(sinks: ["a": first, "b": second], pool: pool)
        defer { server.stop(grace: 0) }
        let held = try await Self.heldUpload("a", on: server, sink: first)
        let waiting = try RawConnection(port: server.port)
        waiting.send(Self.head("b", length: Self.body.count))
        waiting.send(Self.body)
        #expect(await eventually { pool.counts == (1, 1) }, "the second upload does not wait: \(pool.counts)")
        #expect(second.takenAtNice.isEmpty, "nothing of a waiting upload is taken")
        held.send(Array(Self.body[1000...]))  // in the socket before the piece is let go: no race with the deadline
        first.release.signal()
        #expect(await held.readAnswer()?.json["received"] == 3000)
        let answer = await waiting.readAnswer()
        #expect(answer?.status == 200 && answer?.json["received"] == 3000, "queued, not refused: \(String(describing: answer))")
        #expect(await eventually { pool.counts == (0, 0) })
    }

    /// Flow control: while a piece is with the judge the connection is parked and nothing more
    /// is read, so the client's 16 MiB wait in the socket buffers (they fill and it blocks)
    /// instead of in the server; released, the rest is judged.
    @Test func whileAPieceIsJudgedNothingMoreIsReadAndTheClientWaits() async throws {
        let sink = HeldSink(limit: 32 << 20)
        let pool = SinkPool(threads: 1)
        let server = try Self.server(sinks: ["a": sink], pool: pool)
        defer { server.stop(grace: 0) }
        let rest = [UInt8](repeating: UInt8(ascii: "x"), count: 16 << 20)
        let connection = try RawConnection(port: server.port)
        connection.send(Self.head("a", length: 1000 + rest.count))
        connection.send(Array(Self.body[..<1000]))
        let entered = await offThePool { sink.entered.wait(timeout: .now() + 300) == .success }
        #expect(entered, "the sink never got the first piece")
        let sent = Flag()
        Thread.detachNewThread {
            connection.send(rest)
            sent.set()
        }
        #expect(await eventually { !sent.isSet && !connection.canSendNow }, "the server read the body on while a piece was held")
        #expect(sink.taken == 1000, "more was handed to the sink: \(sink.taken)")
        sink.release.signal()
        #expect(await eventually { sent.isSet }, "the client was never let send the rest")
        let answer = await connection.readAnswer()
        #expect(answer?.status == 200 && answer?.json["received"] == .int(Int64(1000 + rest.count)), "\(String(describing: answer))")
    }

    /// A connection parked at its head does not see its socket shut down: past its deadline the
    /// upload is answered instead, and leaves the queue.
    @Test func realTimeAnUploadWaitingForAJudgePastItsDeadlineIsAnswered503() async throws {
        let first = HeldSink(), second = HeldSink()
        let pool = SinkPool(threads: 1)
        // 1 s: the held upload's judging does not count against it; the waiting one's wait does.
        let server = try Self.server(sinks: ["a": first, "b": second], pool: pool, deadline: 1)
        defer { server.stop(grace: 0) }
        let held = try await Self.heldUpload("a", on: server, sink: first)
        let waiting = try RawConnection(port: server.port)
        waiting.send(Self.head("b", length: Self.body.count, expectContinue: true))
        let answer = try #require(await waiting.readAnswer(timeout: 300), "the waiting upload was never answered")
        #expect(answer.status == 503 && answer.json["code"] == "judges_busy", "\(answer)")
        #expect(answer.headers["retry-after"] != nil)
        #expect(await eventually { pool.counts == (1, 0) }, "it stayed in the queue: \(pool.counts)")
        held.send(Array(Self.body[1000...]))  // in the socket before the piece is let go: no race with the deadline
        first.release.signal()
        #expect(await held.readAnswer()?.json["received"] == 3000, "the judged upload was not cut by its judging")
        #expect(second.takenAtNice.isEmpty)
    }

    /// A parked connection does not see its client leave: once the piece is taken and the
    /// connection resumed, libmicrohttpd does, the sink gives the body up and the place is free.
    @Test func aClientGoneWhileItsPieceIsJudgedLeavesNoJudgeAndFreesItsPlace() async throws {
        let gone = HeldSink(), next = HeldSink()
        next.release.signal()
        let pool = SinkPool(threads: 1)
        let server = try Self.server(sinks: ["a": gone, "b": next], pool: pool)
        defer { server.stop(grace: 0) }
        let upload = try await Self.heldUpload("a", on: server, sink: gone)
        upload.hangUp()
        gone.release.signal()
        #expect(await eventually { gone.abandoned.isSet }, "the body of a client gone was never given up")
        #expect(await eventually { pool.counts == (0, 0) }, "its place was kept: \(pool.counts)")
        #expect(await eventually { server.openConnections == 0 }, "its connection leaked")
        let after = try RawConnection(port: server.port)
        after.send(Self.head("b", length: Self.body.count) + String(decoding: Self.body, as: UTF8.self))
        #expect(await after.readAnswer()?.json["received"] == 3000, "the next upload was not judged")
    }

    /// The stop's grace on the test's clock (an hour, moved): an upload whose piece is being
    /// judged when it passes is answered `503` midway (over its socket: libmicrohttpd takes no
    /// answer mid-body), one waiting for a judge `503` at its head, and the server stops.
    @Test func anUploadBeingJudgedWhenTheGracePassesIsAnswered503AndOneWaitingToo() async throws {
        let judged = HeldSink(), waiting = HeldSink()
        let pool = SinkPool(threads: 1)
        let clock = ManualTime()
        let log = LockedLines()
        let server = try Self.server(sinks: ["a": judged, "b": waiting], pool: pool, clock: clock,
                                     log: RequestLog(enabled: false) { line in log.append(line) })
        let upload = try await Self.heldUpload("a", on: server, sink: judged)
        let queued = try RawConnection(port: server.port)
        queued.send(Self.head("b", length: Self.body.count, expectContinue: true))
        #expect(await eventually { pool.counts == (1, 1) }, "\(pool.counts)")
        let stopped = await ShutdownTests.stopPastAnHoursGrace(server, on: clock)
        let answer = try #require(await upload.readAnswer(), "the upload being judged got no answer when the grace passed")
        #expect(answer.status == 503 && answer.json["code"] == "shutting_down" && answer.closes, "\(answer)")
        let refused = try #require(await queued.readAnswer(), "the upload waiting for a judge got no answer")
        #expect(refused.status == 503 && refused.json["code"] == "shutting_down", "\(refused)")
        judged.release.signal()  // the piece in hand is finished; nothing after it is judged
        #expect(await eventually { stopped.isSet }, "the stop did not end")
        #expect(judged.abandoned.isSet && pool.counts == (0, 0))
        #expect(log.all.contains { $0.contains("2 parked requests were not ready") }, "\(log.all)")
        #expect(waiting.takenAtNice.isEmpty)
    }
}

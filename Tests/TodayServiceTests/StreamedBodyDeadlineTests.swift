import Foundation
import Testing
import TodayHost
import TodayStore
@testable import TodayServer
import TodayTestSupport

/// Issue 21, item 6: a streamed body (`POST /v1/host-traces`, judged as it arrives) is held to
/// the whole-request deadline by the time the server waits for the client only — never by the
/// time the server spends judging it — plus the time its bytes earn at `--min-upload-rate`; a
/// trickling client is still cut (issue 7). The time spent judging is excused up to
/// `judgingAllowance` plus what the bytes earned: a judge slower than a trickler's gaps (a
/// loaded server) does not keep the trickler forever. The deadline arithmetic is checked on a
/// clock the test gives, so nothing races a window; the real server is checked on outcomes.
@Suite struct StreamedBodyDeadlineTests {
    static let second: UInt64 = 1_000_000_000

    /// A socket pair: the deadlines watch one end, the test reads the other (EOF once cut).
    final class WatchedSocket: @unchecked Sendable {
        let watched: Int32
        let peer: Int32
        let key = OpaquePointer(bitPattern: 0x5eed)!

        init() {
            var ends: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
            watched = ends[0]
            peer = ends[1]
        }

        deinit {
            close(watched)
            close(peer)
        }

        /// Whether the watched end was shut down: the peer reads the end at once.
        var wasShutDown: Bool {
            var watch = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&watch, 1, 0) > 0 else { return false }
            var byte: UInt8 = 0
            return recv(peer, &byte, 1, Int32(MSG_DONTWAIT)) == 0
        }
    }

    /// A connection the deadlines watch from 0.
    static func opened(on deadlines: RequestDeadlines) -> WatchedSocket {
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: 0)
        return socket
    }

    /// Checks that the connection stands exactly at `at` and is cut a nanosecond later.
    static func expectCut(_ deadlines: RequestDeadlines, _ socket: WatchedSocket, justAfter at: UInt64,
                          sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(deadlines.check(at: at) == 0, "exactly at the deadline it still stands", sourceLocation: sourceLocation)
        #expect(!socket.wasShutDown, sourceLocation: sourceLocation)
        #expect(deadlines.check(at: at + 1) == 1, sourceLocation: sourceLocation)
        #expect(socket.wasShutDown, sourceLocation: sourceLocation)
    }

    @Test func anOrdinaryRequestIsCutAtItsDeadline() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = Self.opened(on: deadlines)
        Self.expectCut(deadlines, socket, justAfter: 30 * Self.second)
        #expect(deadlines.cut == 1)
    }

    @Test func timeSpentJudgingIsNotTheClientsAndEachByteEarnsItsShare() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536, judgingAllowance: 3600)
        let socket = Self.opened(on: deadlines)
        // 1 s of waiting, then the server judges a piece for 99 s: never cut meanwhile.
        deadlines.working(socket.key, at: 1 * Self.second)
        #expect(deadlines.check(at: 1000 * Self.second) == 0, "a piece being judged within the allowance has no deadline")
        // The piece was 10 × 64 KiB: 10 s earned; the client has used 1 s of 40.
        deadlines.worked(socket.key, bytes: 10 * 65536, at: 100 * Self.second)
        Self.expectCut(deadlines, socket, justAfter: 139 * Self.second)
    }

    /// A body waiting its turn for a judge (`serve --trace-queue-seconds`): the wait is the
    /// server's, so the pool's allowance is added to its deadline.
    @Test func aBodyWaitingForAJudgeHasThePoolsAllowanceBeyondItsDeadline() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = Self.opened(on: deadlines)
        deadlines.allow(socket.key, seconds: 300)
        #expect(deadlines.check(at: 31 * Self.second) == 0, "past the request deadline, within the allowance")
        Self.expectCut(deadlines, socket, justAfter: 330 * Self.second)
    }

    @Test func aTricklerEarnsAlmostNothing() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = Self.opened(on: deadlines)
        // A byte a second for 31 s: 31 bytes earn under a millisecond.
        for t in 1...31 {
            deadlines.working(socket.key, at: UInt64(t) * Self.second)
            deadlines.worked(socket.key, bytes: 1, at: UInt64(t) * Self.second)
        }
        #expect(deadlines.check(at: 31 * Self.second) == 1)
        #expect(socket.wasShutDown)
    }

    /// The judge takes a second a piece and the trickler's next byte is always waiting when a
    /// piece is done, so the client never keeps the server waiting: only the judging
    /// allowance bounds the connection. With 10 s of it, and 30 s of deadline, the trickler is
    /// cut by the check made while the piece of the 40th second is out; with an hour of it, not.
    @Test func aJudgeSlowerThanATricklerIsExcusedOnlyItsAllowance() {
        for (allowance, expected) in [(10.0, 40 as UInt64?), (3600, nil)] {
            let deadlines = RequestDeadlines(deadline: 30, minimumRate: 1 << 30, judgingAllowance: allowance)
            let socket = Self.opened(on: deadlines)
            var cutAt: UInt64?
            for t in UInt64(0)..<60 where cutAt == nil {
                deadlines.working(socket.key, at: t * Self.second)
                if deadlines.check(at: t * Self.second + Self.second / 2) == 1 { cutAt = t }
                deadlines.worked(socket.key, bytes: 1, at: (t + 1) * Self.second)
            }
            #expect(cutAt == expected, "allowance \(allowance)")
            #expect(socket.wasShutDown == (expected != nil), "allowance \(allowance)")
        }
    }

    /// A piece out counts against the client once the allowance is spent: 10 s of waiting,
    /// then a piece judged from 10 s with 60 s excused, so the client's 30 s are up at 90 s.
    @Test func aPieceOutPastTheAllowanceIsCutWhileOut() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536, judgingAllowance: 60)
        let socket = Self.opened(on: deadlines)
        deadlines.working(socket.key, at: 10 * Self.second)
        #expect(deadlines.check(at: 70 * Self.second) == 0, "all of the judging so far excused")
        Self.expectCut(deadlines, socket, justAfter: 90 * Self.second)
    }

    /// The bytes' earned time lengthens the judging allowance as much as the deadline: with
    /// no allowance of its own, a piece after 10 s' worth of bytes is excused 10 s of judging.
    @Test func theBytesEarnJudgingTimeToo() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536, judgingAllowance: 0)
        let socket = Self.opened(on: deadlines)
        deadlines.working(socket.key, at: 0)
        deadlines.worked(socket.key, bytes: 10 * 65536, at: 0)
        // Waiting 1 s, then judged for 20 s of which 10 are excused: 11 s of 40 used at 21 s.
        deadlines.working(socket.key, at: 1 * Self.second)
        deadlines.worked(socket.key, bytes: 0, at: 21 * Self.second)
        Self.expectCut(deadlines, socket, justAfter: 50 * Self.second)
    }

    @Test func theNextRequestOnAKeptConnectionStartsAfreshWithoutTheEarnedTime() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 1)
        let socket = Self.opened(on: deadlines)
        deadlines.working(socket.key, at: 0)
        deadlines.worked(socket.key, bytes: 1_000_000, at: 0)  // earned a million seconds
        deadlines.answering(socket.key)
        #expect(deadlines.check(at: 500 * Self.second) == 0, "being answered: no deadline")
        deadlines.answered(socket.key, at: 500 * Self.second)
        #expect(deadlines.check(at: 530 * Self.second) == 0)
        #expect(deadlines.check(at: 530 * Self.second + 1) == 1, "the earned time went with the answered request")
    }

    @Test func hugeFiguresDoNotOverflow() {
        let deadlines = RequestDeadlines(deadline: 3600, minimumRate: 1)
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: UInt64.max - Self.second)
        deadlines.working(socket.key, at: UInt64.max - Self.second)
        deadlines.worked(socket.key, bytes: Int.max, at: UInt64.max)
        #expect(deadlines.check(at: UInt64.max) == 0)
        deadlines.working(socket.key, at: 5)
        deadlines.worked(socket.key, bytes: Int.max, at: 0)  // a clock that went backwards adds nothing
        #expect(deadlines.check(at: 0) == 0)
        // A piece out at the clock's end, checked before and after it is done.
        let out = RequestDeadlines(deadline: 3600, minimumRate: 1, judgingAllowance: .greatestFiniteMagnitude)
        let outSocket = WatchedSocket()
        out.opened(outSocket.key, socket: outSocket.watched, at: UInt64.max - 2 * Self.second)
        out.working(outSocket.key, at: UInt64.max - Self.second)
        #expect(out.check(at: UInt64.max) == 0)
        out.worked(outSocket.key, bytes: Int.max, at: UInt64.max)
        #expect(out.check(at: UInt64.max) == 0)
        #expect(!outSocket.wasShutDown)
    }

    /// Waiting for a judge lengthens the deadline by the pool's allowance (above), not the
    /// judging allowance: judged from 0 with 10 s excused, the client's 30 + 300 s are up at 340 s.
    @Test func theQueuesAllowanceIsNotJudgingTime() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536, judgingAllowance: 10)
        let socket = Self.opened(on: deadlines)
        deadlines.allow(socket.key, seconds: 300)
        deadlines.working(socket.key, at: 0)
        Self.expectCut(deadlines, socket, justAfter: 340 * Self.second)
    }

    // MARK: On a real server

    /// A sink that holds its first piece until `release` is called, as a slow judge does.
    final class HeldSink: BodySink, @unchecked Sendable {
        let limit: Int
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        /// Set when the request ended without an answer (`abandon`).
        let abandoned = Flag()
        private let lock = NSLock()
        private var bytes = 0
        private var holdsNext = true
        private var niceValues: Set<Int32> = []

        init(limit: Int = 1 << 20) {
            self.limit = limit
        }

        /// Bytes taken so far.
        var taken: Int {
            lock.lock()
            defer { lock.unlock() }
            return bytes
        }

        /// The nice values of the threads its pieces were taken on (on Linux a thread's own).
        var takenAtNice: Set<Int32> {
            lock.lock()
            defer { lock.unlock() }
            return niceValues
        }

        func take(_ piece: UnsafeBufferPointer<UInt8>) {
            lock.lock()
            bytes += piece.count
            niceValues.insert(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
            let holds = holdsNext
            holdsNext = false
            lock.unlock()
            if holds {
                entered.signal()
                release.wait()
            }
        }

        func finish() -> HTTPResponse {
            lock.lock()
            defer { lock.unlock() }
            return .json(["received": .int(bytes)])
        }

        func abandon() { abandoned.set() }
    }

    /// A judge slower than any trickler: every piece takes it `pause` seconds.
    final class SlowSink: BodySink, @unchecked Sendable {
        let limit = 1 << 20
        let pause: TimeInterval

        init(pause: TimeInterval) {
            self.pause = pause
        }

        func take(_ piece: UnsafeBufferPointer<UInt8>) { Thread.sleep(forTimeInterval: pause) }
        func finish() -> HTTPResponse { .json(["finished": true]) }
        func abandon() {}
    }

    /// A whole-request deadline of `deadline` s; libmicrohttpd's own silence limit an hour, so
    /// a piece held on purpose is not taken for a silent client. `clock`: what the deadlines
    /// run on (this machine's when not given).
    static func server(deadline: TimeInterval, judgingAllowance: TimeInterval = HTTPServer.defaultJudgingAllowance,
                       clock: (any TimeSource)? = nil, sink: any BodySink & Sendable) throws -> HTTPServer {
        try HTTPServer(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 3600, judgingAllowance: judgingAllowance,
                       requestDeadline: deadline, log: RequestLog(enabled: false), connectionTime: clock ?? SystemTime(),
                       bodyHandling: { request in request.path == "/upload" ? .streamed(sink, routeName: "upload") : .whole },
                       respond: { _ in (.json(["whole": true]), routeName: "other") })
    }

    /// On a real server, its deadlines on a clock the test moves: the first piece of a body is
    /// held while the clock moves `seconds` (a 60 s deadline, the default 300 s of judging
    /// allowance) and the checker has looked; then the piece is let go. What the checker did
    /// meanwhile: how many cuts, and the answer the client got (`nil`: the connection was cut).
    static func holdFirstPiece(whileTheClockMoves seconds: Millis) async throws -> (cut: Int, answer: RawConnection.Answer?) {
        let clock = ManualTime()
        let sink = HeldSink()
        let server = try Self.server(deadline: 60, clock: clock, sink: sink)
        defer { server.stop(grace: 0) }
        let connection = try RawConnection(port: server.port)
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)
        connection.send(Array("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body[..<1000])
        let entered = await offThePool { sink.entered.wait(timeout: .now() + 300) == .success }
        #expect(entered, "the sink never got the first piece")
        #expect(await server.moveDeadlineClock(clock, by: seconds * 1000), "the checker never looked at the moved clock")
        let cut = server.deadlines.cut
        connection.send(Array(body[1000...]))
        sink.release.signal()
        return (cut, await connection.readAnswer(timeout: 300))
    }

    /// Judged for 2 minutes against a 1-minute deadline: the judging is the server's.
    @Test func aBodyTheServerTakesLongerThanTheDeadlineToJudgeIsAnswered() async throws {
        let (cut, answer) = try await Self.holdFirstPiece(whileTheClockMoves: 120)
        #expect(cut == 0)
        #expect(answer?.status == 200, "\(String(describing: answer))")
        #expect(answer?.json["received"] == 3000, "\(String(describing: answer))")
    }

    /// Judged for 60 + 300 s and a second: past the deadline and the judging allowance, the
    /// connection is cut with its piece out, and closed once the piece is let go.
    @Test func aBodyJudgedPastTheAllowanceIsCutWithItsPieceOut() async throws {
        let (cut, answer) = try await Self.holdFirstPiece(whileTheClockMoves: 361)
        #expect(cut == 1)
        #expect(answer == nil, "\(String(describing: answer))")
    }

    /// Opens an upload of 100,000 bytes and sends it a byte, then waits up to 100 ms for the
    /// cut (about 10 B/s, far under 64 KiB/s), until the cut comes or 300 s have passed.
    static func trickleUntilCut(_ server: HTTPServer) async throws -> Bool {
        let connection = try RawConnection(port: server.port)
        connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        let giveUp = Date(timeIntervalSinceNow: 300)
        while Date() < giveUp {
            connection.send([UInt8(ascii: "x")])
            if await connection.closedByServer(timeout: 0.1) { return true }
        }
        return false
    }

    @Test func realTimeATricklingUploadIsStillCut() async throws {
        let sink = HeldSink()
        sink.release.signal()  // the first piece goes straight through
        // 1 s of judging excused: however slow the judge (sanitizers, a loaded runner), the
        // trickler is cut a few seconds in; with judging excused in full it was not in 300 s.
        let server = try Self.server(deadline: 1, judgingAllowance: 1, sink: sink)
        defer { server.stop(grace: 0) }
        #expect(try await Self.trickleUntilCut(server), "a trickler kept its connection for 300 s")
        #expect(server.deadlineChecks > 0)
    }

    /// What a loaded server did in CI: the judge slower than the trickler's gaps, so a byte is
    /// always waiting when a piece is done. The judging allowance (1 s here) still cuts it,
    /// about 6 s in. Without it only the moments between a piece done and the next begun
    /// counted (about a millisecond each): 5 s of them take thousands of pieces, far past the
    /// 300 s the trickle is given. (The tests on a clock of their own above are the exact guard.)
    @Test func realTimeATricklerIsCutByAJudgeSlowerThanItsGaps() async throws {
        let server = try Self.server(deadline: 5, judgingAllowance: 1, sink: SlowSink(pause: 0.3))
        defer { server.stop(grace: 0) }
        #expect(try await Self.trickleUntilCut(server), "a trickler kept its connection for 300 s")
        // Cut while a piece was out: libmicrohttpd closes it once the judge is done and it resumes.
        #expect(await eventually { server.deadlines.watched == 0 }, "the cut connection was never closed")
    }
}

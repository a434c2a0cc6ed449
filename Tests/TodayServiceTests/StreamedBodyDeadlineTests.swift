import Foundation
import Testing
import TodayHost
@testable import TodayServer
import TodayTestSupport

/// Issue 21, item 6: a streamed body (`POST /v1/host-traces`, judged as it arrives) is held to
/// the whole-request deadline by the time the server waits for the client only — never by the
/// time the server spends judging it — plus the time its bytes earn at `--min-upload-rate`; a
/// trickling client is still cut (issue 7). The deadline arithmetic is checked on a clock the
/// test gives, so nothing races a window; the real server is checked on outcomes.
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

    @Test func anOrdinaryRequestIsCutAtItsDeadline() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: 0)
        #expect(deadlines.check(at: 30 * Self.second) == 0, "exactly at the deadline it still stands")
        #expect(!socket.wasShutDown)
        #expect(deadlines.check(at: 30 * Self.second + 1) == 1)
        #expect(socket.wasShutDown)
        #expect(deadlines.cut == 1)
    }

    @Test func timeSpentJudgingIsNotTheClientsAndEachByteEarnsItsShare() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: 0)
        // 1 s of waiting, then the server judges a piece for 99 s: never cut meanwhile.
        deadlines.working(socket.key, at: 1 * Self.second)
        #expect(deadlines.check(at: 1000 * Self.second) == 0, "a piece being judged has no deadline")
        // The piece was 10 × 64 KiB: 10 s earned; the client has used 1 s of 40.
        deadlines.worked(socket.key, bytes: 10 * 65536, at: 100 * Self.second)
        #expect(deadlines.check(at: 139 * Self.second) == 0)
        #expect(!socket.wasShutDown)
        #expect(deadlines.check(at: 139 * Self.second + 1) == 1)
        #expect(socket.wasShutDown)
    }

    /// A body waiting its turn for a judge (`serve --trace-queue-seconds`): the wait is the
    /// server's, so the pool's allowance is added to its deadline.
    @Test func aBodyWaitingForAJudgeHasThePoolsAllowanceBeyondItsDeadline() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: 0)
        deadlines.allow(socket.key, seconds: 300)
        #expect(deadlines.check(at: 31 * Self.second) == 0, "past the request deadline, within the allowance")
        #expect(deadlines.check(at: 330 * Self.second) == 0)
        #expect(!socket.wasShutDown)
        #expect(deadlines.check(at: 330 * Self.second + 1) == 1)
        #expect(socket.wasShutDown)
    }

    @Test func aTricklerEarnsAlmostNothing() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 65536)
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: 0)
        // A byte a second for 31 s: 31 bytes earn under a millisecond.
        for t in 1...31 {
            deadlines.working(socket.key, at: UInt64(t) * Self.second)
            deadlines.worked(socket.key, bytes: 1, at: UInt64(t) * Self.second)
        }
        #expect(deadlines.check(at: 31 * Self.second) == 1)
        #expect(socket.wasShutDown)
    }

    @Test func theNextRequestOnAKeptConnectionStartsAfreshWithoutTheEarnedTime() {
        let deadlines = RequestDeadlines(deadline: 30, minimumRate: 1)
        let socket = WatchedSocket()
        deadlines.opened(socket.key, socket: socket.watched, at: 0)
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

    /// A whole-request deadline of `deadline` s; libmicrohttpd's own silence limit an hour, so
    /// a piece held on purpose is not taken for a silent client.
    static func server(deadline: TimeInterval, sink: HeldSink) throws -> HTTPServer {
        try HTTPServer(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 3600, requestDeadline: deadline,
                       log: RequestLog(enabled: false),
                       bodyHandling: { request in request.path == "/upload" ? .streamed(sink, routeName: "upload") : .whole },
                       respond: { _ in (.json(["whole": true]), routeName: "other") })
    }

    @Test func realTimeABodyTheServerTakesLongerThanTheDeadlineToJudgeIsAnswered() async throws {
        let sink = HeldSink()
        let server = try Self.server(deadline: 1, sink: sink)
        defer { server.stop(grace: 0) }
        let connection = try RawConnection(port: server.port)
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)
        connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
        connection.send(Array(body[..<1000]))
        // The first piece is being judged: held until the checker (about once a second, against
        // a 1 s deadline) has had three more turns to cut the connection. Judging must not count.
        let entered = await offThePool { sink.entered.wait(timeout: .now() + 300) == .success }
        #expect(entered, "the sink never got the first piece")
        let turns = server.deadlineChecks
        #expect(await eventually { server.deadlineChecks >= turns + 3 }, "the deadline checker took three turns")
        sink.release.signal()
        connection.send(Array(body[1000...]))
        let answer = await connection.readAnswer(timeout: 300)
        #expect(answer?.status == 200, "\(String(describing: answer))")
        #expect(answer?.json["received"] == 3000, "\(String(describing: answer))")
    }

    @Test func realTimeATricklingUploadIsStillCut() async throws {
        let sink = HeldSink()
        sink.release.signal()  // the first piece goes straight through
        let server = try Self.server(deadline: 1, sink: sink)
        defer { server.stop(grace: 0) }
        let connection = try RawConnection(port: server.port)
        connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        // A byte, then up to 100 ms for the cut (about 10 B/s, far under 64 KiB/s), until it comes.
        let giveUp = Date(timeIntervalSinceNow: 300)
        var cut = false
        while !cut, Date() < giveUp {
            connection.send([UInt8(ascii: "x")])
            cut = await connection.closedByServer(timeout: 0.1)
        }
        #expect(cut, "a trickler kept its connection for 300 s")
        #expect(server.deadlineChecks > 0)
    }
}

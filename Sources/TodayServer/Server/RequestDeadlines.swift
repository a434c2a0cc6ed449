import Foundation
import TodayStore

/// Slow clients (issue 7, abuse): libmicrohttpd closes a connection only after
/// `connection timeout` seconds *without any byte*, so a client that trickles a byte now and
/// then could hold a connection — and with enough of them every connection slot — forever.
/// This gives every request a deadline as a whole: its headers and body must arrive within
/// `deadline` of the connection opening (or of the previous answer, on a kept-alive
/// connection); a connection still waiting for them after that is shut down. A request being
/// answered — including a parked long poll or an event stream — has no deadline.
///
/// A streamed body (`POST /v1/host-traces`, up to 256 MiB, judged as it arrives) counts only
/// the time the server waits for the client, not the time it spends on each piece, and every
/// byte it brings earns `1 / minimumRate` seconds more: a client that sends at least
/// `minimumRate` bytes a second is never cut while the judge keeps that pace, one that
/// trickles is cut as any other. One that waits parked for a judge (`SinkPool`) waits on its
/// deadline too, lengthened by the pool's `waitAllowance`, and is answered (`whenCut`).
///
/// The time spent judging is excused up to `judgingAllowance` plus what the bytes earned, not
/// without end: when the judge is slower than a trickler's gaps, the next byte is always
/// waiting when a piece is done, so almost none of the time would count against the client,
/// and a slow (or loaded) server would keep every trickler forever. Past the allowance the
/// judging counts as the client's, and a connection is cut even while a piece is out (its
/// socket is shut down; libmicrohttpd sees it when the piece is done and the connection
/// resumed).
final class RequestDeadlines: @unchecked Sendable {
    private struct Watch {
        let socket: Int32
        /// Since when (the deadlines' clock's `steadyNs`) the connection has been waiting for a
        /// request (or its body); `nil` while a request is being answered.
        var waitingSince: UInt64?
        /// While the server works on a piece of a streamed body: since when.
        var workingSince: UInt64?
        /// Seconds past `deadline` the streamed body's bytes have earned (they lengthen the
        /// judging allowance too).
        var earned: Double = 0
        /// Seconds past `deadline` allowed for waiting for a judge (`allow`); the judging
        /// allowance is not lengthened by them.
        var allowed: Double = 0
        /// Nanoseconds of judging excused so far (`waitingSince` moved on by them).
        var excused: UInt64 = 0
        /// Answers a connection past its deadline that libmicrohttpd would not see shut down
        /// (parked); `false` when it is not parked after all (it is then shut down).
        var whenCut: (@Sendable () -> Bool)?
    }

    let deadline: TimeInterval
    /// Bytes a second a streamed body must keep to, on average, past its first `deadline`.
    let minimumRate: Int
    /// Seconds of judging a streamed body is excused beyond what its bytes earned.
    let judgingAllowance: TimeInterval
    /// What the deadlines and the checker's second are measured on (`SystemTime`; a test's
    /// `ManualTime`, moved past a deadline).
    private let time: any TimeSource
    /// The checker waits on it between turns; `stop` signals it.
    private let lock = NSCondition()
    // Guarded by `lock`.
    private var watches: [OpaquePointer: Watch] = [:]
    private var stopped = false
    private var cutCount = 0
    private var checkCount = 0

    /// Connections shut down so far for missing their deadline.
    var cut: Int {
        lock.lock()
        defer { lock.unlock() }
        return cutCount
    }

    init(deadline: TimeInterval, minimumRate: Int = HTTPServer.defaultMinimumUploadRate,
         judgingAllowance: TimeInterval = HTTPServer.defaultJudgingAllowance, time: any TimeSource = SystemTime()) {
        self.deadline = deadline
        self.minimumRate = max(1, minimumRate)
        self.judgingAllowance = max(0, judgingAllowance)
        self.time = time
    }

    /// How many connections are watched (a test knows the server saw its connection open).
    var watched: Int {
        lock.lock()
        defer { lock.unlock() }
        return watches.count
    }

    /// How many times the checker has looked (tests wait for turns of it, not for seconds).
    var checks: Int {
        lock.lock()
        defer { lock.unlock() }
        return checkCount
    }

    /// libmicrohttpd accepted a connection.
    func opened(_ connection: OpaquePointer, socket: Int32, at given: UInt64? = nil) {
        let now = given ?? time.steadyNs()
        lock.lock()
        watches[connection] = Watch(socket: socket, waitingSince: now)
        lock.unlock()
    }

    /// libmicrohttpd closed a connection. It says so before it closes the socket, and the
    /// checker shuts sockets down under the same lock, so a socket number reused by a new
    /// connection is never shut down for an old one.
    func closed(_ connection: OpaquePointer) {
        lock.lock()
        watches[connection] = nil
        lock.unlock()
    }

    /// The request's headers and body are in: it is being answered.
    func answering(_ connection: OpaquePointer) {
        lock.lock()
        watches[connection]?.waitingSince = nil
        watches[connection]?.workingSince = nil
        lock.unlock()
    }

    /// The answer was sent: the kept-alive connection waits for its next request.
    func answered(_ connection: OpaquePointer, at given: UInt64? = nil) {
        let now = given ?? time.steadyNs()
        lock.lock()
        watches[connection]?.waitingSince = now
        watches[connection]?.workingSince = nil
        watches[connection]?.earned = 0
        watches[connection]?.allowed = 0
        watches[connection]?.excused = 0
        watches[connection]?.whenCut = nil
        lock.unlock()
    }

    /// The request may wait parked (a streamed body waiting for a place in the `SinkPool`),
    /// where a shut-down socket goes unseen: past its deadline `answer` answers it instead,
    /// called with the deadlines' lock held (it must not call back into them). A body with a
    /// piece out is not waiting: `answer` returns `false` and the socket is shut down, seen by
    /// libmicrohttpd when the piece is done and the connection resumed.
    func whenCut(_ connection: OpaquePointer, answer: @escaping @Sendable () -> Bool) {
        lock.lock()
        watches[connection]?.whenCut = answer
        lock.unlock()
    }

    /// Answers a request midway through its body, and closes the connection's sending side
    /// (the stop's grace ended while a streamed body arrived: libmicrohttpd 0.9.75 queues an
    /// answer only before a body or after it). Under the lock: never on a socket reused.
    func answerMidway(_ connection: OpaquePointer, with bytes: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        guard let socket = watches[connection]?.socket else { return }
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        shutdown(socket, Int32(SHUT_WR))
    }

    /// The server starts on a piece of a streamed body: its deadline stands still meanwhile.
    func working(_ connection: OpaquePointer, at given: UInt64? = nil) {
        let now = given ?? time.steadyNs()
        lock.lock()
        if watches[connection]?.waitingSince != nil { watches[connection]?.workingSince = now }
        lock.unlock()
    }

    /// The connection may wait `seconds` more before it is cut (a body waiting for a judge:
    /// the wait is the server's).
    func allow(_ connection: OpaquePointer, seconds: TimeInterval) {
        lock.lock()
        if watches[connection]?.waitingSince != nil { watches[connection]?.allowed += max(0, seconds) }
        lock.unlock()
    }

    /// The piece of `bytes` is done: the time it took is not the client's (as far as the
    /// allowance goes), and its bytes earn their share of time.
    func worked(_ connection: OpaquePointer, bytes: Int, at given: UInt64? = nil) {
        let now = given ?? time.steadyNs()
        lock.lock()
        if var watch = watches[connection], let since = watch.waitingSince, let working = watch.workingSince {
            let excused = excusable(watch, at: now, working: working)
            watch.waitingSince = since > UInt64.max - excused ? UInt64.max : since + excused
            watch.excused = watch.excused > UInt64.max - excused ? UInt64.max : watch.excused + excused
            watch.workingSince = nil
            watch.earned += Double(max(0, bytes)) / Double(minimumRate)
            watches[connection] = watch
        }
        lock.unlock()
    }

    /// Of the piece out since `working`, the nanoseconds up to `now` not counted against the
    /// client: all of them while the allowance and the earned time last, then none.
    private func excusable(_ watch: Watch, at now: UInt64, working: UInt64) -> UInt64 {
        let spent = now > working ? now - working : 0
        let room = Self.nanoseconds(judgingAllowance + watch.earned)
        return min(spent, room > watch.excused ? room - watch.excused : 0)
    }

    /// `seconds` in nanoseconds, saturated well below overflow.
    private static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(min(max(0, seconds) * 1e9, Double(UInt64.max / 2)))
    }

    /// Shuts down every connection past its deadline at `given` (by default now, on the
    /// deadlines' clock); how many.
    @discardableResult
    func check(at given: UInt64? = nil) -> Int {
        let now = given ?? time.steadyNs()
        lock.lock()
        defer { lock.unlock() }
        var count = 0
        for (connection, watch) in watches {
            guard let since = watch.waitingSince, now > since else { continue }
            // A piece out counts as the client's only past the judging allowance.
            let judging = watch.workingSince.map { excusable(watch, at: now, working: $0) } ?? 0
            let waited = now - since
            let allowed = Self.nanoseconds(deadline + watch.earned + watch.allowed)
            guard waited > judging, waited - judging > allowed else { continue }
            watches[connection]?.waitingSince = nil
            count += 1
            if let answer = watch.whenCut, answer() { continue }
            // Shutting the socket down (not closing it) makes libmicrohttpd see the end of the
            // connection and clean it up in its own thread.
            shutdown(watch.socket, Int32(SHUT_RDWR))
        }
        cutCount += count
        checkCount += 1
        return count
    }

    /// Checks the deadlines every second (on the deadlines' clock) until `stop()`.
    func start() {
        Thread { [self] in
            while true {
                lock.lock()
                let next = time.now.addingTimeInterval(1)
                while !stopped, time.wait(lock, until: next) {}
                let done = stopped
                lock.unlock()
                if done { return }
                check()
            }
        }.start()
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.signal()
        lock.unlock()
    }
}

import CMicroHTTPD
import Foundation
import TodayStore

/// What a stop needs to know of the requests (issue 12, item 2): whether the stop began, how
/// many requests are in flight, and which connections are parked (suspended) until their
/// answer is ready. libmicrohttpd aborts the whole process when its daemon is stopped with a
/// connection still suspended (`MHD_stop_daemon() called while we have suspended
/// connections`), and a kept-alive connection may send a new request at any moment before
/// that — so once stopping, new requests are refused at once (they never park), and after the
/// grace every connection still parked is answered `503` and resumed before the daemon ends.
final class RequestsInFlight: @unchecked Sendable {
    private struct Parked {
        let connection: OpaquePointer
        /// Gives the parked request a `503` answer, unless its own answer came first (`nil`: a
        /// streamed body's piece, whose body is answered as one arriving).
        let refuse: (@Sendable () -> Void)?
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var count = 0
    private var parked: [Int: Parked] = [:]
    /// Streamed bodies still arriving, each with what answers it when the grace ends midway.
    private var arriving: [Int: @Sendable () -> Bool] = [:]
    private var nextKey = 0
    private var stopping = false
    /// Set when the grace ran out: nothing may park any more.
    private var sealed = false
    /// The clock the drain's grace runs on (`SystemTime`; a test's `ManualTime`).
    private let time: any TimeSource

    init(time: any TimeSource = SystemTime()) {
        self.time = time
    }

    /// Whether the server is stopping: new requests are refused, answers close their connection.
    var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    func enter() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    func leave() {
        condition.lock()
        count -= 1
        if count == 0 { condition.broadcast() }
        condition.unlock()
    }

    func beginStopping() {
        condition.lock()
        stopping = true
        condition.unlock()
    }

    /// Registers a connection about to be suspended; `nil` once the stop sealed (the request
    /// must be answered now instead).
    func park(_ connection: OpaquePointer, refuse: (@Sendable () -> Void)?) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard !sealed else { return nil }
        nextKey += 1
        parked[nextKey] = Parked(connection: connection, refuse: refuse)
        return nextKey
    }

    /// The parked request's answer is ready: resumes its connection, unless the stop already
    /// did (then the connection may be gone and must not be touched). `first` runs before, only
    /// when the connection is still parked.
    func resume(_ key: Int, first: () -> Void = {}) {
        condition.lock()
        let entry = parked.removeValue(forKey: key)
        condition.unlock()
        guard let entry else { return }
        first()
        MHD_resume_connection(entry.connection)
    }

    /// A streamed body begins to arrive; `refuse` answers it if the grace ends before it is all
    /// in (`false`: it was not arriving then). `nil` once the stop sealed.
    func arrive(refuse: @escaping @Sendable () -> Bool) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard !sealed else { return nil }
        nextKey += 1
        arriving[nextKey] = refuse
        return nextKey
    }

    /// The streamed body is all in, or its request ended.
    func arrived(_ key: Int) {
        condition.lock()
        arriving[key] = nil
        condition.unlock()
    }

    /// Waits up to `grace` (on `time`) for every request in flight to be answered; then answers
    /// what is still parked `503` and resumes it, and waits up to `settle` (real time: the
    /// answers' bytes going out) for those answers to go out. After this no connection is
    /// suspended by a request. Returns how many were refused.
    func drain(grace: TimeInterval, settle: TimeInterval = 1) -> Int {
        condition.lock()
        let deadline = time.now.addingTimeInterval(grace)
        while count > 0, time.wait(condition, until: deadline) {}
        sealed = true
        let left = Array(parked.values)
        let bodies = Array(arriving.values)
        parked = [:]
        arriving = [:]
        condition.unlock()
        // A body midway first (its piece may be parked too: answered before it is resumed).
        let midway = bodies.filter { refuse in refuse() }.count
        for entry in left {
            entry.refuse?()
            MHD_resume_connection(entry.connection)
        }
        let refused = left.filter { $0.refuse != nil }.count + midway
        guard !left.isEmpty || midway > 0 else { return 0 }
        condition.lock()
        // This machine's clock, not `time`: the bytes go out on it, and a test's clock that is
        // not moved again would hold the stop until every answer went out.
        let clock = SystemTime()
        let settled = clock.now.addingTimeInterval(settle)
        while count > 0, clock.wait(condition, until: settled) {}
        condition.unlock()
        return refused
    }
}

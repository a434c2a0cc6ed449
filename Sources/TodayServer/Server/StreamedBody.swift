import Foundation

/// One streamed body between the HTTP worker that reads it and the `SinkPool` that takes it
/// (issue 33, item 3). The worker only hands each piece over and parks the connection until the
/// sink has taken it (libmicrohttpd then reads the next: a slow sink slows the client, and no
/// more than a piece is held); the sink's calls run one at a time, in order, on the pool.
final class StreamedBody: @unchecked Sendable {
    /// Where the body stands in the pool.
    private enum Place {
        /// Not asked yet; next `waiting` or `taking`.
        case none
        /// In the queue, its connection parked at its head (`key`); next `taking` (its turn)
        /// or `none` (given up: its deadline or the stop).
        case waiting(ticket: Int, key: Int)
        /// Holding a place; next `left`.
        case taking
        /// Its place given back.
        case left
    }

    /// What `enter` did.
    enum Entry {
        case taking, waiting
        /// The stop's grace is over: it cannot wait (answer it `503`).
        case sealed
    }

    let sink: any BodySink
    let route: String
    private let pool: SinkPool
    private let lock = NSLock()
    // Guarded by `lock`.
    private var place = Place.none
    private var resumedAtHead = false
    private var pieceOut = false
    private var finishing = false
    private var ended = false
    private var refused = false
    private var jobs: [@Sendable () -> Void] = []
    private var running = false

    init(sink: any BodySink, route: String, pool: SinkPool) {
        self.sink = sink
        self.route = route
        self.pool = pool
    }

    /// Takes a place in the pool, or waits for one: `park` suspends the connection and returns
    /// the key its turn resumes it by (`nil` once the stop sealed). It runs with the lock held,
    /// so the turn cannot come before the connection is parked.
    func enter(park: () -> Int?, resume: @escaping @Sendable (Int) -> Void) -> Entry {
        lock.lock()
        defer { lock.unlock() }
        guard let ticket = pool.enter(turn: { [self] in turnCame(resume: resume) }) else {
            place = .taking
            return .taking
        }
        guard let key = park() else {
            // Its turn may be on its way: then the place is its own, given back at its end.
            place = pool.withdraw(ticket) ? .none : .taking
            return .sealed
        }
        place = .waiting(ticket: ticket, key: key)
        return .waiting
    }

    private func turnCame(resume: @Sendable (Int) -> Void) {
        lock.lock()
        guard case let .waiting(_, key) = place else {
            lock.unlock()
            return
        }
        place = .taking
        resumedAtHead = true
        lock.unlock()
        resume(key)
    }

    /// Leaves the queue (its deadline passed, or the stop): the key its connection is parked
    /// by, or `nil` when it was not waiting (its turn came first).
    func giveUpWaiting() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard case let .waiting(ticket, key) = place, pool.withdraw(ticket) else { return nil }
        place = .none
        return key
    }

    /// Whether this call of libmicrohttpd's is the one its turn resumed (once).
    func takeResumeAtHead() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard resumedAtHead else { return false }
        resumedAtHead = false
        return true
    }

    /// Whether a piece is with the sink (the connection parked until it is taken).
    var hasPieceOut: Bool {
        lock.lock()
        defer { lock.unlock() }
        return pieceOut
    }

    /// Whether the stop answered it midway (the rest of the body is dropped).
    var isRefused: Bool {
        lock.lock()
        defer { lock.unlock() }
        return refused
    }

    /// Hands `piece` to the sink; `taken` runs once it is taken.
    func handOver(_ piece: [UInt8], taken: @escaping @Sendable () -> Void) {
        lock.lock()
        pieceOut = true
        lock.unlock()
        perform { [self] in
            if !isEnded { piece.withUnsafeBufferPointer { sink.take($0) } }
            lock.lock()
            pieceOut = false
            lock.unlock()
            taken()
        }
    }

    /// The body is all in: `deliver` gets the sink's answer, made on the pool. `false` when the
    /// stop answered it already.
    func finish(deliver: @escaping @Sendable (HTTPResponse) -> Void) -> Bool {
        lock.lock()
        guard !refused, !ended else {
            lock.unlock()
            return false
        }
        finishing = true
        lock.unlock()
        perform { [self] in
            // A client gone meanwhile is answered by no one: its abandon follows.
            guard endOnce() else { return }
            let made = MadeResponse(response: sink.finish())
            leavePlace()
            deliver(made.response)
        }
        return true
    }

    /// The stop's grace ended while the body was arriving: `true` if it was (the caller answers
    /// it), and the sink gives it up.
    func refuse() -> Bool {
        lock.lock()
        guard case .taking = place, !finishing, !ended, !refused else {
            lock.unlock()
            return false
        }
        refused = true
        lock.unlock()
        abandon()
        return true
    }

    /// The request ended before its answer (the client left, a cut, a refusal): the sink gives
    /// the body up and its place goes to the next.
    func abandon() {
        guard endOnce() else { return }
        _ = giveUpWaiting()
        perform { [self] in
            sink.abandon()
            leavePlace()
        }
    }

    private var isEnded: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Marks the body ended; `false` if it was already.
    @discardableResult
    private func endOnce() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !ended else { return false }
        ended = true
        return true
    }

    private func leavePlace() {
        lock.lock()
        guard case .taking = place else {
            lock.unlock()
            return
        }
        place = .left
        lock.unlock()
        pool.leave()
    }

    /// Runs `job` on the pool after the body's earlier jobs: one at a time, in order.
    private func perform(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        jobs.append(job)
        guard !running else {
            lock.unlock()
            return
        }
        running = true
        lock.unlock()
        pool.run { [self] in
            while true {
                lock.lock()
                guard !jobs.isEmpty else {
                    running = false
                    lock.unlock()
                    return
                }
                let next = jobs.removeFirst()
                lock.unlock()
                next()
            }
        }
    }
}

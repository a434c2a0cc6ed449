import CPostgres
import Foundation
import Glibc

/// Hears what the other servers on one PostgreSQL database commit (issue 15, item 4): one
/// connection of its own, neither the writer nor a reader, `LISTEN`s on `PostgresChannels`, and
/// one thread sleeps in `poll` on its socket until a notification arrives (no polling loop).
/// Notifications this server sent (its token, `PostgresChannels`) are skipped: its commits
/// already told its observers. A lost connection is opened again in the background, waiting longer after each
/// failure (`RetryBackoff`); what was sent meanwhile is lost, so the first news after it is
/// `.unknown` (everything may have changed).
final class PostgresListener: @unchecked Sendable {
    private let uri: String
    /// This server's token in its notifications.
    private let sender: String
    /// Written to wake the thread from `poll` when the store closes; closed in `deinit`, once
    /// neither the thread nor `stop` can use it.
    private let wakePipe: (read: Int32, write: Int32)?
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var started = false
    private var stopping = false
    private var running = false
    private var firstTried = false
    /// Tests: the connection is closed and not opened again until released (`hold`).
    private var held = false
    /// The thread has seen `held` and dropped its connection.
    private var holding = false

    /// What the reconnect backoff waits on: this machine's clock, or a test's (`ManualTime`).
    private let time: any TimeSource
    /// Tests: how many times a listening connection was tried.
    private var tries = 0

    init(uri: String, sender: String, time: any TimeSource = SystemTime()) {
        self.uri = uri
        self.sender = sender
        self.time = time
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            wakePipe = nil
            return
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            // Neither a waker nor the thread emptying it ever blocks on it.
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        wakePipe = (fds[0], fds[1])
    }

    deinit {
        if let wakePipe {
            Glibc.close(wakePipe.read)
            Glibc.close(wakePipe.write)
        }
    }

    /// Listens from now on: returns once the first connection was tried, so a write another
    /// server commits after this returns is heard of; when it failed, the thread keeps trying.
    func start(_ receive: @escaping @Sendable (RemoteChange) -> Void) {
        condition.lock()
        guard !started, !stopping, let wakePipe else { return condition.unlock() }
        started = true
        running = true
        condition.unlock()
        let thread = Thread { [self] in
            let first = try? listen()
            condition.lock()
            firstTried = true
            condition.broadcast()
            condition.unlock()
            follow(from: first, wakePipe.read, receive)
            condition.lock()
            running = false
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "todaysim-pg-listen"
        thread.start()
        condition.lock()
        while !firstTried { condition.wait() }
        condition.unlock()
    }

    /// Ends the thread and its connection. Waits for it, but not past 2 s: a connection attempt
    /// under way (to a database host that does not answer) ends only at its connect timeout,
    /// and a server stopping should not wait that out; the thread then ends on its own, hearing
    /// nothing more.
    func stop() {
        condition.lock()
        stopping = true
        condition.unlock()
        wakeThread()
        condition.lock()
        // On this machine's clock, not `time`: libpq's connect timeout runs on it.
        let clock = SystemTime()
        let deadline = clock.now.addingTimeInterval(2)
        while running, !clock.hasReached(deadline) { _ = clock.wait(condition, until: deadline) }
        condition.unlock()
    }

    /// Tests: closes the listening connection and opens none until `hold(false)`, as while the
    /// database is out of reach; whatever other servers send meanwhile is never heard. Holding
    /// returns once the thread has dropped its connection: returning at once, a thread slow to
    /// run (a CPU hog beside the test) still heard what the test sent next as if listening.
    func hold(_ held: Bool) {
        condition.lock()
        self.held = held
        condition.unlock()
        wakeThread()
        guard held else { return }
        condition.lock()
        // This machine's clock: how long the thread may take to be scheduled and drop its connection.
        let clock = SystemTime()
        let deadline = clock.now.addingTimeInterval(60)
        while !holding, running, !clock.hasReached(deadline) { _ = clock.wait(condition, until: deadline) }
        condition.unlock()
    }

    private func setHolding(_ value: Bool) {
        condition.lock()
        if holding != value {
            holding = value
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Wakes the thread from its `poll` on the connection, or from its wait for the next try.
    private func wakeThread() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
        guard let wakePipe else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    /// Tests: how many times a listening connection was tried (the first one included).
    var connectionTries: Int {
        condition.lock()
        defer { condition.unlock() }
        return tries
    }

    private var state: (stopping: Bool, held: Bool) {
        condition.lock()
        defer { condition.unlock() }
        return (stopping, held)
    }

    /// A new connection, listening. Its TCP keepalives find a peer that vanished without a word
    /// (a host gone): nothing else is ever sent on this connection.
    private func listen() throws(PostgresError) -> PostgresConnection {
        condition.lock()
        tries += 1
        condition.unlock()
        let connection = try PostgresConnection(uri: uri, connectTimeout: 5, defaults: [
            ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
        ])
        try connection.execute("LISTEN \(PostgresChannels.changes); LISTEN \(PostgresChannels.wallTimers)")
        return connection
    }

    /// The thread: waits for notifications, or for the next try to connect, until `stop`.
    private func follow(from first: PostgresConnection?, _ wake: Int32, _ receive: @Sendable (RemoteChange) -> Void) {
        var connection = first
        // Whether notifications may have been sent that this server never heard.
        var newsLost = first == nil
        var backoff = RetryBackoff(ceiling: PostgresOutage.longestWait)
        if first == nil { _ = backoff.failed(StoreError.storageUnavailable("no listening connection"), at: time.now) }
        while true {
            let (stopping, held) = state
            if stopping { return }
            if held {
                if connection != nil { newsLost = true }
                connection = nil
                setHolding(true)
                waitWithoutConnection(until: nil)
                continue
            }
            setHolding(false)
            guard let listening = connection else {
                if let until = backoff.until, !time.hasReached(until) {
                    waitWithoutConnection(until: until)
                    continue
                }
                do throws(PostgresError) {
                    connection = try listen()
                    _ = backoff.succeeded()
                } catch {
                    _ = backoff.failed(error, at: time.now)
                }
                continue
            }
            if newsLost {
                newsLost = false
                receive(.unknown)
            }
            guard let changes = received(on: listening) else {
                connection = nil
                newsLost = true
                _ = backoff.failed(StoreError.storageUnavailable("the listening connection was lost"), at: time.now)
                continue
            }
            for change in changes { receive(change) }
            Self.waitForInput(on: listening.socket, orWake: wake)
        }
    }

    /// The notifications that arrived, but this server's own, as changes (a batch's session ids
    /// in one); `nil` when the connection is lost.
    private func received(on connection: PostgresConnection) -> [RemoteChange]? {
        guard connection.consumeInput() else { return nil }
        var ids: [String] = []
        var wallTimers: [String] = []
        while let notification = connection.nextNotification() {
            let (from, named) = PostgresChannels.parse(notification.payload)
            guard from != sender else { continue }
            switch notification.channel {
            case PostgresChannels.changes: ids += named
            case PostgresChannels.wallTimers: wallTimers += named
            default: continue
            }
        }
        return (ids.isEmpty ? [] : [.sessions(ids)]) + wallTimers.map { .wallTimer($0) }
    }

    /// With no connection to listen on: sleeps until `until` on `time` (`nil`: never), or until
    /// `stop` or `hold` change what the thread should do (the caller looks at `state` again).
    private func waitWithoutConnection(until: Date?) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, held == holding else { return }
        if let until {
            _ = time.wait(condition, until: until)
        } else {
            condition.wait()
        }
    }

    /// Sleeps until `socket` has input or `wakeThread` wrote to `wake` (emptied here: the
    /// caller looks at `state` again either way).
    private static func waitForInput(on socket: Int32, orWake wake: Int32) {
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0), pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
        while poll(&fds, nfds_t(fds.count), -1) < 0, errno == EINTR {}
        guard fds[0].revents != 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wake, &bytes, bytes.count) > 0 {}
    }
}

extension PostgresConnection {
    /// The descriptor of the connection's socket, for `poll`.
    var socket: Int32 { PQsocket(handle) }

    /// Reads what arrived on the socket without blocking; `false` when the connection is lost.
    func consumeInput() -> Bool {
        PQconsumeInput(handle) == 1 && !isBroken
    }

    /// The next notification read from the socket, if any.
    func nextNotification() -> (channel: String, payload: String)? {
        guard let notify = PQnotifies(handle) else { return nil }
        defer { PQfreemem(notify) }
        return (String(cString: notify.pointee.relname), String(cString: notify.pointee.extra))
    }
}

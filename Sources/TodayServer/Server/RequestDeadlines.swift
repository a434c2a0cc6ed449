import Foundation

/// Slow clients (issue 7, abuse): libmicrohttpd closes a connection only after
/// `connection timeout` seconds *without any byte*, so a client that trickles a byte now and
/// then could hold a connection — and with enough of them every connection slot — forever.
/// This gives every request a deadline as a whole: its headers and body must arrive within
/// `deadline` of the connection opening (or of the previous answer, on a kept-alive
/// connection); a connection still waiting for them after that is shut down. A request being
/// answered — including a parked long poll or an event stream — has no deadline.
final class RequestDeadlines: @unchecked Sendable {
    private struct Watch {
        let socket: Int32
        /// Since when the connection has been waiting for a request (or its body); `nil` while
        /// a request is being answered.
        var waitingSince: DispatchTime?
    }

    let deadline: TimeInterval
    private let lock = NSLock()
    // Guarded by `lock`.
    private var watches: [OpaquePointer: Watch] = [:]
    private var stopped = false
    private var cutCount = 0

    /// Connections shut down so far for missing their deadline.
    var cut: Int {
        lock.lock()
        defer { lock.unlock() }
        return cutCount
    }

    init(deadline: TimeInterval) {
        self.deadline = deadline
    }

    /// libmicrohttpd accepted a connection.
    func opened(_ connection: OpaquePointer, socket: Int32) {
        lock.lock()
        watches[connection] = Watch(socket: socket, waitingSince: .now())
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
        lock.unlock()
    }

    /// The answer was sent: the kept-alive connection waits for its next request.
    func answered(_ connection: OpaquePointer) {
        lock.lock()
        watches[connection]?.waitingSince = .now()
        lock.unlock()
    }

    /// Checks the deadlines every second until `stop()`.
    func start() {
        Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 1)
                lock.lock()
                if stopped {
                    lock.unlock()
                    return
                }
                let now = DispatchTime.now().uptimeNanoseconds
                let span = UInt64(deadline * 1e9)
                let limit = now > span ? now - span : 0
                for (connection, watch) in watches {
                    guard let since = watch.waitingSince, since.uptimeNanoseconds < limit else { continue }
                    // Shutting the socket down (not closing it) makes libmicrohttpd see the end
                    // of the connection and clean it up in its own thread.
                    shutdown(watch.socket, Int32(SHUT_RDWR))
                    watches[connection]?.waitingSince = nil
                    cutCount += 1
                }
                lock.unlock()
            }
        }.start()
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }
}

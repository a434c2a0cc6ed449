import CMicroHTTPD
import Foundation
import TodayStore

/// Why the server could not start.
package enum ServerStartError: Error, CustomStringConvertible {
    case cannotListen(host: String, port: Int, reason: String)
    case daemonFailed

    package var description: String {
        switch self {
        case let .cannotListen(host, port, reason): return "cannot listen on \(host):\(port): \(reason)"
        case .daemonFailed: return "libmicrohttpd could not start its daemon"
        }
    }
}

/// An HTTP/1.1 server on libmicrohttpd: keep-alive, an internal epoll thread pool, bodies up
/// to `maximumBodyBytes`. Owns the daemon; `stop()` stops accepting, lets in-flight requests
/// finish (answers made while stopping close their connection; requests that arrive on a
/// kept-alive connection meanwhile are refused `503 shutting_down`) and shuts it down.
package final class HTTPServer: @unchecked Sendable {
    package static let maximumBodyBytes = 1 << 20
    /// How much of an oversized unannounced body is read (and thrown away) before the
    /// connection is cut instead of answered.
    static let discardLimit = 8 << 20
    /// 64 KiB a second (`serve --min-upload-rate`).
    package static let defaultMinimumUploadRate = 65536
    /// Seconds of judging a streamed body is excused beyond what its bytes earn
    /// (`serve --trace-judging-seconds`).
    package static let defaultJudgingAllowance: TimeInterval = 300

    package let port: Int
    let respond: @Sendable (HTTPRequest) -> (HTTPResponse, routeName: String)
    let bodyHandling: @Sendable (HTTPRequest) -> BodyHandling
    let log: RequestLog
    // Set once in init, cleared once by stop(); guarded by `stateLock`.
    var daemon: OpaquePointer?
    // Set by beginStopping(); guarded by `stateLock`.
    var stopping = false
    let stateLock = NSLock()
    let requests: RequestsInFlight
    let deadlines: RequestDeadlines
    let connections: ConnectionLimit
    let heapTrim: HeapTrim
    let listeningSocket: Int32
    let workers: Int
    /// libmicrohttpd's connection limit for each worker (it divides its limit among them).
    let workerLimit: Int
    let listener = ListenerClosing()
    /// Where streamed bodies are taken (`serve --trace-threads`); stopped after the daemon.
    let sinks: SinkPool

    /// Binds `host:port` (0 picks a free port) and starts serving with `threads` workers.
    /// `connectionTimeout`: seconds a connection may stay silent, and the deadline for a whole
    /// request to arrive (see `RequestDeadlines`). `maxConnections`: open connections served at
    /// once; a request on one past it is answered `503` (see `ConnectionLimit`).
    /// `limitNoteInterval`: how often refusals past `maxConnections` are logged, at most.
    /// `bodyHandling`: from a request's head, whether its body is read whole (then `respond`)
    /// or handed to a sink as it arrives. `minimumUploadRate`: bytes a second a streamed body
    /// must keep to past its first `connectionTimeout` (the time its sink takes is not counted,
    /// up to `judgingAllowance` seconds plus what the bytes earn).
    /// `requestDeadline`: the whole-request deadline when it is not `connectionTimeout` (tests
    /// set it apart from libmicrohttpd's silence limit). `time`: the clock the drain's grace runs
    /// on (tests move it). `connectionTime`: the clock the request deadlines, the connection
    /// limit's notes and the heap trim run on — apart from `time`, so a test that moves the
    /// drain past an hour's grace does not also move every connection past its deadline.
    /// `sinks`: where streamed bodies are taken (a pool of one thread when not given); the
    /// server stops it after the daemon.
    package init(host: String, port: Int, threads: Int, connectionTimeout: Int = 30, maxConnections: Int = 4000,
                limitNoteInterval: TimeInterval = 10, minimumUploadRate: Int = HTTPServer.defaultMinimumUploadRate,
                judgingAllowance: TimeInterval = HTTPServer.defaultJudgingAllowance,
                requestDeadline: TimeInterval? = nil, log: RequestLog, time: any TimeSource = SystemTime(),
                connectionTime: any TimeSource = SystemTime(),
                sinks: SinkPool? = nil,
                bodyHandling: @escaping @Sendable (HTTPRequest) -> BodyHandling = { _ in .whole },
                respond: @escaping @Sendable (HTTPRequest) -> (HTTPResponse, routeName: String)) throws {
        var boundPort: Int32 = 0
        var isIPv6: Int32 = 0
        var errorCode: Int32 = 0
        let socket = todaysim_listen(host, Int32(port), &boundPort, &isIPv6, &errorCode)
        guard socket >= 0 else {
            let reason = errorCode == -2 ? "the host does not resolve" : String(cString: strerror(errorCode))
            throw ServerStartError.cannotListen(host: host, port: port, reason: reason)
        }
        self.port = Int(boundPort)
        listeningSocket = socket
        workers = max(1, threads)
        workerLimit = Self.connectionsHeld(serving: maxConnections) / workers
        self.respond = respond
        self.bodyHandling = bodyHandling
        self.sinks = sinks ?? SinkPool(threads: 1)
        self.log = log
        requests = RequestsInFlight(time: time)
        deadlines = RequestDeadlines(deadline: requestDeadline ?? TimeInterval(connectionTimeout), minimumRate: minimumUploadRate,
                                     judgingAllowance: judgingAllowance, time: connectionTime)
        connections = ConnectionLimit(limit: maxConnections, noteInterval: limitNoteInterval, time: connectionTime) { [log] line in
            log.note(line)
        }
        heapTrim = HeapTrim(time: connectionTime)

        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if isIPv6 != 0 { flags |= MHD_USE_IPv6.rawValue }
        // The server outlives its daemon: stop() (also from deinit) ends the daemon first.
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = todaysim_start_daemon(
            flags, accessHandler, context, requestCompleted, context, connectionNotice, context, socket,
            UInt32(workers), UInt32(connectionTimeout), UInt32(Self.connectionsHeld(serving: maxConnections)))
        else {
            close(socket)
            throw ServerStartError.daemonFailed
        }
        daemon = started
        deadlines.start()
    }

    deinit {
        stop()
    }

    /// The most connections the server holds open when it serves `maxConnections`: those plus
    /// the room above them for answering the ones past the limit.
    package static func connectionsHeld(serving maxConnections: Int) -> Int {
        maxConnections + ConnectionLimit.headroom(for: maxConnections)
    }

    /// How many times the request deadlines were checked (about once a second).
    var deadlineChecks: Int { deadlines.checks }

    /// The connections libmicrohttpd holds now, counted by its workers (0 once stopped).
    package var openConnections: Int {
        stateLock.lock()
        defer { stateLock.unlock() }
        return daemon.map { max(0, todaysim_daemon_connections($0)) } ?? 0
    }

    /// From now on new connections are refused by the kernel (the listening socket closes, so
    /// a load balancer sends them elsewhere), new requests on connections already open are
    /// refused `503 shutting_down`, and every answer closes its connection. (The service then
    /// releases its long polls and streams; `stop()` waits for what is in flight.) Not
    /// `MHD_quiesce_daemon`: it races with libmicrohttpd's own epoll workers in 0.9.75 (both
    /// remove the listening socket from the epoll set, the loser aborts the process: "Failed
    /// to remove listen FD from epoll set", once in about 200 SIGTERMs under load); see
    /// `ListenerClosing` for what is done instead and when it is not (the socket then stays
    /// open until `MHD_stop_daemon`, and what connects meanwhile is refused `503`).
    package func beginStopping() {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard let daemon, !stopping else { return }
        stopping = true
        requests.beginStopping()
        if case let .keptOpen(reason) = listener.close(listening: listeningSocket, of: daemon, workers: workers, workerLimit: workerLimit) {
            log.note("stopping: the listening socket stays open until the daemon stops (\(reason))")
        }
    }

    /// Stops accepting, waits up to `grace` for requests in flight (`serve --drain-seconds`),
    /// answers `503` whatever is still parked and gives those answers as long again (1 to 5 s)
    /// to go out, then ends the daemon — never with a connection suspended, which
    /// libmicrohttpd answers by aborting the process.
    package func stop(grace: TimeInterval = 5) {
        beginStopping()
        stateLock.lock()
        defer { stateLock.unlock() }
        guard let daemon else { return }
        let refused = requests.drain(grace: grace, settle: min(max(1, grace), 5))
        if refused > 0 { log.note("stopping: \(refused) parked requests were not ready after \(grace) s and were answered 503") }
        MHD_stop_daemon(daemon)  // closes the listening socket (or the pipe that replaced it) too
        sinks.stop()  // the bodies the daemon's end abandoned are given up
        listener.finish()
        deadlines.stop()
        self.daemon = nil
    }
}

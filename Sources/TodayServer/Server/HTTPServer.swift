import CMicroHTTPD
import Foundation

/// Why the server could not start.
public enum ServerStartError: Error, CustomStringConvertible {
    case cannotListen(host: String, port: Int, reason: String)
    case daemonFailed

    public var description: String {
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
public final class HTTPServer: @unchecked Sendable {
    public static let maximumBodyBytes = 1 << 20
    /// How much of an oversized unannounced body is read (and thrown away) before the
    /// connection is cut instead of answered.
    static let discardLimit = 8 << 20
    /// 64 KiB a second (`serve --min-upload-rate`).
    public static let defaultMinimumUploadRate = 65536

    public let port: Int
    private let respond: @Sendable (HTTPRequest) -> (HTTPResponse, routeName: String)
    private let bodyHandling: @Sendable (HTTPRequest) -> BodyHandling
    private let log: RequestLog
    // Set once in init, cleared once by stop(); guarded by `stateLock`.
    private var daemon: OpaquePointer?
    // Set by beginStopping(); guarded by `stateLock`.
    private var stopping = false
    private let stateLock = NSLock()
    private let requests = RequestsInFlight()
    private let deadlines: RequestDeadlines
    private let connections: ConnectionLimit
    private let heapTrim = HeapTrim()
    private let listeningSocket: Int32
    private let workers: Int
    /// libmicrohttpd's connection limit for each worker (it divides its limit among them).
    private let workerLimit: Int
    private let listener = ListenerClosing()

    /// Binds `host:port` (0 picks a free port) and starts serving with `threads` workers.
    /// `connectionTimeout`: seconds a connection may stay silent, and the deadline for a whole
    /// request to arrive (see `RequestDeadlines`). `maxConnections`: open connections served at
    /// once; a request on one past it is answered `503` (see `ConnectionLimit`).
    /// `limitNoteInterval`: how often refusals past `maxConnections` are logged, at most.
    /// `bodyHandling`: from a request's head, whether its body is read whole (then `respond`)
    /// or handed to a sink as it arrives. `minimumUploadRate`: bytes a second a streamed body
    /// must keep to past its first `connectionTimeout` (the time its sink takes is not counted).
    /// `requestDeadline`: the whole-request deadline when it is not `connectionTimeout` (tests
    /// set it apart from libmicrohttpd's silence limit).
    public init(host: String, port: Int, threads: Int, connectionTimeout: Int = 30, maxConnections: Int = 4000,
                limitNoteInterval: TimeInterval = 10, minimumUploadRate: Int = HTTPServer.defaultMinimumUploadRate,
                requestDeadline: TimeInterval? = nil, log: RequestLog,
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
        self.log = log
        deadlines = RequestDeadlines(deadline: requestDeadline ?? TimeInterval(connectionTimeout), minimumRate: minimumUploadRate)
        connections = ConnectionLimit(limit: maxConnections, noteInterval: limitNoteInterval) { [log] line in log.note(line) }

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
    public static func connectionsHeld(serving maxConnections: Int) -> Int {
        maxConnections + ConnectionLimit.headroom(for: maxConnections)
    }

    /// How many times the request deadlines were checked (about once a second).
    var deadlineChecks: Int { deadlines.checks }

    /// The connections libmicrohttpd holds now, counted by its workers (0 once stopped).
    public var openConnections: Int {
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
    public func beginStopping() {
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
    public func stop(grace: TimeInterval = 5) {
        beginStopping()
        stateLock.lock()
        defer { stateLock.unlock() }
        guard let daemon else { return }
        let refused = requests.drain(grace: grace, settle: min(max(1, grace), 5))
        if refused > 0 { log.note("stopping: \(refused) parked requests were not ready after \(grace) s and were answered 503") }
        MHD_stop_daemon(daemon)  // closes the listening socket (or the pipe that replaced it) too
        listener.finish()
        deadlines.stop()
        self.daemon = nil
    }

    // MARK: Called by libmicrohttpd

    fileprivate func handle(connection: OpaquePointer, url: String, method: String,
                            upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                            slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let stored = slot.pointee else {
            // First call: headers only. Refuse an announced oversized body at once (and close).
            let exchange = Exchange()
            slot.pointee = Unmanaged.passRetained(exchange).toOpaque()
            requests.enter()
            if connections.isRefused(connection) {
                exchange.answered = true
                return queue(APIError.tooManyConnections.response, on: connection, method: method, route: "-", exchange: exchange)
            }
            if requests.isStopping {
                // A kept-alive connection's next request after the stop began: refused (and,
                // answered on the first call, its connection closed) — it must not park.
                exchange.answered = true
                return queue(APIError.shuttingDown.response, on: connection, method: method, route: "-", exchange: exchange)
            }
            if let refusal = RequestFraming.refusal(of: connection) {
                exchange.answered = true
                return queue(refusal.response, on: connection, method: method, route: "-", exchange: exchange)
            }
            let announced = header(connection, "Content-Length").flatMap(Int.init)
            switch bodyHandling(request(on: connection, method: method, url: url, body: [])) {
            case .whole:
                break
            case let .refused(response, route):
                exchange.answered = true
                return queue(response, on: connection, method: method, route: route, exchange: exchange)
            case let .streamed(sink, route):
                if let announced, announced > sink.limit {
                    exchange.answered = true
                    return queue(APIError.bodyTooLarge(limit: sink.limit).response, on: connection, method: method, route: route, exchange: exchange)
                }
                exchange.sink = sink
                exchange.sinkRoute = route
                return .YES
            }
            if let length = announced, length > Self.maximumBodyBytes {
                exchange.answered = true
                return queue(APIError.payloadTooLarge.response, on: connection, method: method, route: "-", exchange: exchange)
            }
            return .YES
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(stored).takeUnretainedValue()
        if let (makeResponse, route) = exchange.takeFinished() {
            // Resumed: the parked answer is ready (or asks to wait again).
            return answer(makeResponse(), on: connection, method: method, route: route, exchange: exchange)
        }
        if uploadSize.pointee > 0 {
            let size = uploadSize.pointee
            uploadSize.pointee = 0
            guard !exchange.answered, let upload else { return .YES }
            if let sink = exchange.sink {
                // Streamed: each piece goes to the sink as it comes (its answer waits for the end).
                // Past its limit the rest is read and dropped, as below, to be answered 413.
                if exchange.tooLarge || size > sink.limit - exchange.received {
                    exchange.discarded += size
                    return exchange.discarded > Self.discardLimit ? .NO : .YES
                }
                exchange.received += size
                // The time the sink takes is the server's, not the client's (RequestDeadlines).
                deadlines.working(connection)
                upload.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                    sink.take(UnsafeBufferPointer(start: bytes, count: size))
                }
                deadlines.worked(connection, bytes: size)
                return .YES
            }
            if exchange.tooLarge || exchange.body.count + size > Self.maximumBodyBytes {
                // A body without an announced length (chunked) that grows past the limit is
                // read on and thrown away so its end can be answered `413` cleanly (an answer
                // queued mid-upload only closes the connection); one that goes on past
                // `discardLimit` is cut off.
                exchange.body = []
                exchange.discarded += size
                return exchange.discarded > Self.discardLimit ? .NO : .YES
            }
            upload.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                exchange.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: size))
            }
            return .YES
        }
        guard !exchange.answered else { return .YES }
        exchange.answered = true
        if let sink = exchange.sink {
            exchange.sink = nil
            deadlines.answering(connection)  // the whole body is in; finishing it is the server's time
            if exchange.tooLarge {
                sink.abandon()
                return queue(APIError.bodyTooLarge(limit: sink.limit).response, on: connection, method: method,
                             route: exchange.sinkRoute, exchange: exchange)
            }
            return answer(sink.finish(), on: connection, method: method, route: exchange.sinkRoute, exchange: exchange)
        }
        if exchange.tooLarge {
            return queue(APIError.payloadTooLarge.response, on: connection, method: method, route: "-", exchange: exchange)
        }
        let (response, routeName) = respond(request(on: connection, method: method, url: url, body: exchange.body))
        return answer(response, on: connection, method: method, route: routeName, exchange: exchange)
    }

    /// The request as handlers see it, its headers and query read from the connection.
    private func request(on connection: OpaquePointer, method: String, url: String, body: [UInt8]) -> HTTPRequest {
        HTTPRequest(
            method: method, path: url, body: body,
            header: { [connection] name in todaysim_request_header(connection, name).map { String(cString: $0) } },
            query: { [connection] name in
                var size = 0
                guard let value = todaysim_query_argument(connection, name, &size) else { return nil }
                // The decoded length, so `?uid=ab%00cd` reads as the whole value (and is refused), not as "ab".
                return String(decoding: UnsafeRawBufferPointer(start: value, count: size), as: UTF8.self)
            })
    }

    /// Sends `response`, or parks the connection until its deferred work is done; resuming
    /// makes libmicrohttpd call `handle` again, which answers with what the work made.
    private func answer(_ response: HTTPResponse, on connection: OpaquePointer, method: String, route: String,
                        exchange: Exchange) -> MHD_Result {
        guard let deferred = response.deferred else {
            return queue(response, on: connection, method: method, route: route, exchange: exchange)
        }
        let refuse: @Sendable () -> Void = { exchange.finish({ APIError.notAnsweredInTime.response }, route: route) }
        guard let key = requests.park(connection, refuse: refuse) else {
            // The stop's grace is over: nothing may park any more.
            return queue(APIError.shuttingDown.response, on: connection, method: method, route: route, exchange: exchange)
        }
        deadlines.answering(connection)
        MHD_suspend_connection(connection)
        deferred { [requests] makeResponse in
            exchange.finish(makeResponse, route: route)
            requests.resume(key)
        }
        return .YES
    }

    fileprivate func completed(connection: OpaquePointer?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        if let connection { deadlines.answered(connection) }
        guard let slot, let stored = slot.pointee else { return }
        let exchange = Unmanaged<Exchange>.fromOpaque(stored).takeUnretainedValue()
        // A streamed body whose request ended before its last byte (the client left, a cut).
        exchange.sink?.abandon()
        exchange.sink = nil
        Unmanaged<Exchange>.fromOpaque(stored).release()
        slot.pointee = nil
        requests.leave()
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer, method: String, route: String,
                       exchange: Exchange) -> MHD_Result {
        deadlines.answering(connection)
        let handle: OpaquePointer?
        if let stream = response.stream, method == "HEAD" {
            // HEAD of a stream: its headers, and no one left waiting to push into it.
            stream.abandon()
            handle = todaysim_response_stream_headers()
        } else if let stream = response.stream {
            stream.attachConnection(connection)
            handle = stream.makeResponse()
        } else {
            handle = response.body.withUnsafeBytes { buffer in
                todaysim_response_copying(buffer.count, buffer.baseAddress)
            }
        }
        guard let handle else { return .NO }
        for (name, value) in response.headers { MHD_add_response_header(handle, name, value) }
        // While stopping, no connection may stay open for another request.
        if requests.isStopping { MHD_add_response_header(handle, "Connection", "close") }
        let result = MHD_queue_response(connection, UInt32(response.status), handle)
        MHD_destroy_response(handle)
        log.record(method: method, route: route, status: response.status, startedAt: exchange.startedAt)
        return result
    }

    fileprivate func connection(_ connection: OpaquePointer, notice: MHD_ConnectionNotificationCode) {
        if todaysim_connection_started(notice) != 0 {
            connections.opened(connection)
            deadlines.opened(connection, socket: todaysim_connection_fd(connection))
        } else {
            deadlines.closed(connection)
            connections.closed(connection)
            heapTrim.connectionClosed()
        }
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        todaysim_request_header(connection, name).map { String(cString: $0) }
    }
}

// libmicrohttpd's callbacks; the context pointer is the HTTPServer (not retained: it outlives
// the daemon). No Swift error crosses them.
private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, uploadSize, slot in
    guard let context, let connection, let url, let method, let uploadSize, let slot else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(connection: connection, url: String(cString: url), method: String(cString: method),
                         upload: upload, uploadSize: uploadSize, slot: slot)
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, connection, slot, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(connection: connection, slot: slot)
}

private let connectionNotice: MHD_NotifyConnectionCallback = { context, connection, _, notice in
    guard let context, let connection else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connection(connection, notice: notice)
}

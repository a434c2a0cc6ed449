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
/// finish and shuts it down.
public final class HTTPServer: @unchecked Sendable {
    public static let maximumBodyBytes = 1 << 20
    /// How much of an oversized unannounced body is read (and thrown away) before the
    /// connection is cut instead of answered.
    static let discardLimit = 8 << 20

    public let port: Int
    private let respond: @Sendable (HTTPRequest) -> (HTTPResponse, routeName: String)
    private let log: RequestLog
    // Set once in init, cleared once by stop(); guarded by `stateLock`.
    private var daemon: OpaquePointer?
    private let stateLock = NSLock()
    private let inFlight = InFlightCounter()
    private let deadlines: RequestDeadlines

    /// Binds `host:port` (0 picks a free port) and starts serving with `threads` workers.
    /// `connectionTimeout`: seconds a connection may stay silent, and the deadline for a whole
    /// request to arrive (see `RequestDeadlines`).
    public init(host: String, port: Int, threads: Int, connectionTimeout: Int = 30, log: RequestLog,
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
        self.respond = respond
        self.log = log
        deadlines = RequestDeadlines(deadline: TimeInterval(connectionTimeout))

        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if isIPv6 != 0 { flags |= MHD_USE_IPv6.rawValue }
        // The server outlives its daemon: stop() (also from deinit) ends the daemon first.
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = todaysim_start_daemon(
            flags, accessHandler, context, requestCompleted, context, connectionNotice, context, socket,
            UInt32(max(1, threads)), UInt32(connectionTimeout), 4096)
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

    /// Stops accepting, waits up to `grace` for requests in flight, then ends the daemon.
    public func stop(grace: TimeInterval = 5) {
        stateLock.lock()
        defer { stateLock.unlock() }
        guard let daemon else { return }
        let listening = MHD_quiesce_daemon(daemon)
        inFlight.waitUntilIdle(timeout: grace)
        MHD_stop_daemon(daemon)
        deadlines.stop()
        if listening >= 0 { close(listening) }
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
            inFlight.enter()
            if let length = header(connection, "Content-Length").flatMap(Int.init), length > Self.maximumBodyBytes {
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
        if exchange.tooLarge {
            return queue(APIError.payloadTooLarge.response, on: connection, method: method, route: "-", exchange: exchange)
        }
        let request = HTTPRequest(
            method: method, path: url, body: exchange.body,
            header: { [connection] name in todaysim_request_header(connection, name).map { String(cString: $0) } },
            query: { [connection] name in
                var size = 0
                guard let value = todaysim_query_argument(connection, name, &size) else { return nil }
                // The decoded length, so `?uid=ab%00cd` reads as the whole value (and is refused), not as "ab".
                return String(decoding: UnsafeRawBufferPointer(start: value, count: size), as: UTF8.self)
            })
        let (response, routeName) = respond(request)
        return answer(response, on: connection, method: method, route: routeName, exchange: exchange)
    }

    /// Sends `response`, or parks the connection until its deferred work is done; resuming
    /// makes libmicrohttpd call `handle` again, which answers with what the work made.
    private func answer(_ response: HTTPResponse, on connection: OpaquePointer, method: String, route: String,
                        exchange: Exchange) -> MHD_Result {
        guard let deferred = response.deferred else {
            return queue(response, on: connection, method: method, route: route, exchange: exchange)
        }
        deadlines.answering(connection)
        MHD_suspend_connection(connection)
        let parked = ParkedConnection(connection)
        deferred { makeResponse in
            exchange.finish(makeResponse, route: route)
            MHD_resume_connection(parked.connection)
        }
        return .YES
    }

    fileprivate func completed(connection: OpaquePointer?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        if let connection { deadlines.answered(connection) }
        guard let slot, let stored = slot.pointee else { return }
        Unmanaged<Exchange>.fromOpaque(stored).release()
        slot.pointee = nil
        inFlight.leave()
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer, method: String, route: String,
                       exchange: Exchange) -> MHD_Result {
        deadlines.answering(connection)
        let handle: OpaquePointer?
        if let stream = response.stream {
            stream.attachConnection(connection)
            handle = stream.makeResponse()
        } else {
            handle = response.body.withUnsafeBytes { buffer in
                todaysim_response_copying(buffer.count, buffer.baseAddress)
            }
        }
        guard let handle else { return .NO }
        for (name, value) in response.headers { MHD_add_response_header(handle, name, value) }
        let result = MHD_queue_response(connection, UInt32(response.status), handle)
        MHD_destroy_response(handle)
        log.record(method: method, route: route, status: response.status, startedAt: exchange.startedAt)
        return result
    }

    fileprivate func connection(_ connection: OpaquePointer, notice: MHD_ConnectionNotificationCode) {
        if todaysim_connection_started(notice) != 0 {
            deadlines.opened(connection, socket: todaysim_connection_fd(connection))
        } else {
            deadlines.closed(connection)
        }
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        todaysim_request_header(connection, name).map { String(cString: $0) }
    }
}

/// One request's state between libmicrohttpd's calls: retained in its connection slot from
/// the first call, released when the request completes.
private final class Exchange: @unchecked Sendable {
    var body: [UInt8] = []
    /// Bytes thrown away once the body grew past the limit.
    var discarded = 0
    var tooLarge: Bool { discarded > 0 }
    var answered = false
    let startedAt = DispatchTime.now()
    private let lock = NSLock()
    // Guarded by `lock`: set by the work that a parked request waits for.
    private var finished: (make: @Sendable () -> HTTPResponse, route: String)?

    func finish(_ make: @escaping @Sendable () -> HTTPResponse, route: String) {
        lock.lock()
        finished = (make, route)
        lock.unlock()
    }

    func takeFinished() -> (@Sendable () -> HTTPResponse, String)? {
        lock.lock()
        defer { lock.unlock() }
        guard let ready = finished else { return nil }
        finished = nil
        return (ready.make, ready.route)
    }
}

/// A suspended connection handed to the thread that will resume it (libmicrohttpd allows
/// resuming from any thread).
private struct ParkedConnection: @unchecked Sendable {
    let connection: OpaquePointer

    init(_ connection: OpaquePointer) { self.connection = connection }
}

/// Counts requests in flight so a stop can let them finish.
private final class InFlightCounter: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0

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

    func waitUntilIdle(timeout: TimeInterval) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        while count > 0, condition.wait(until: deadline) {}
        condition.unlock()
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

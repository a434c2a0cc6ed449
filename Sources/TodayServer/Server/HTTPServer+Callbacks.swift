import CMicroHTTPD
import Foundation

/// What libmicrohttpd calls: a request's arrival and body, its completion, a connection's
/// start and end; and how an answer is queued on the connection.
extension HTTPServer {
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
                return beginStream(StreamedBody(sink: sink, route: route, pool: sinks), exchange: exchange,
                                   on: connection, method: method)
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
        if let stream = exchange.streamed {
            return continueStream(stream, exchange: exchange, on: connection, method: method, upload: upload, uploadSize: uploadSize)
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
        // The request is in: from here the time is the server's. Its handler (parsing a 1 MiB
        // body of 200,000 values takes a loaded machine seconds) must not count against the
        // client's deadline, or the checker cuts a request the server is answering.
        deadlines.answering(connection)
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
    func answer(_ response: HTTPResponse, on connection: OpaquePointer, method: String, route: String,
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
        // A streamed body whose request ended before its answer (the client left, a cut).
        if let key = exchange.arriving { requests.arrived(key) }
        exchange.streamed?.abandon()
        exchange.streamed = nil
        Unmanaged<Exchange>.fromOpaque(stored).release()
        slot.pointee = nil
        requests.leave()
    }

    func queue(_ response: HTTPResponse, on connection: OpaquePointer, method: String, route: String,
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
let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, uploadSize, slot in
    guard let context, let connection, let url, let method, let uploadSize, let slot else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(connection: connection, url: String(cString: url), method: String(cString: method),
                         upload: upload, uploadSize: uploadSize, slot: slot)
}

let requestCompleted: MHD_RequestCompletedCallback = { context, connection, slot, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(connection: connection, slot: slot)
}

let connectionNotice: MHD_NotifyConnectionCallback = { context, connection, _, notice in
    guard let context, let connection else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connection(connection, notice: notice)
}

import CMicroHTTPD
import Foundation

/// A streamed body (`POST /v1/host-traces`) as libmicrohttpd's calls meet it (issue 33, item
/// 3): the worker never runs the sink. It waits, parked at its head, for a place in the
/// `SinkPool`; then each piece is handed over and the connection parked until the sink has
/// taken it, so libmicrohttpd reads no more meanwhile (the client is slowed to the sink's pace
/// and a piece at most is held); at its end the answer is made on the pool too.
///
/// A parked connection neither times out nor sees its client leave: the time a piece is judged
/// is the server's (`RequestDeadlines`, up to `serve --trace-judging-seconds` plus what the
/// bytes earned), and each piece is short, so a client gone is seen when
/// the piece is taken and the connection resumed; a body still waiting for a place when its
/// deadline passes is answered `503 judges_busy`. When the stop's grace ends with a body
/// arriving it is answered `503 shutting_down` over its socket (libmicrohttpd 0.9.75 takes an
/// answer only before a body or after it) and the rest is dropped.
extension HTTPServer {
    /// The first call (the request's head): waits for a place, or takes one.
    func beginStream(_ stream: StreamedBody, exchange: Exchange, on connection: OpaquePointer, method: String) -> MHD_Result {
        exchange.streamed = stream
        let route = stream.route
        nonisolated(unsafe) let handle = connection
        let startedAt = exchange.startedAt
        let arriving = requests.arrive { [deadlines, log] in
            guard stream.refuse() else { return false }
            deadlines.answerMidway(handle, with: Self.wireBytes(APIError.shuttingDown.response))
            log.record(method: method, route: route, status: 503, startedAt: startedAt)
            return true
        }
        guard let arriving else {
            exchange.answered = true
            return queue(APIError.shuttingDown.response, on: connection, method: method, route: route, exchange: exchange)
        }
        exchange.arriving = arriving
        deadlines.whenCut(connection) { [requests] in
            guard let key = stream.giveUpWaiting() else { return false }
            exchange.finish({ APIError.judgesBusy.response }, route: route)
            requests.resume(key)
            return true
        }
        let entry = stream.enter(park: {
            let refuse: @Sendable () -> Void = {
                _ = stream.giveUpWaiting()
                exchange.finish({ APIError.shuttingDown.response }, route: route)
            }
            guard let key = requests.park(handle, refuse: refuse) else { return nil }
            MHD_suspend_connection(handle)
            return key
        }, resume: { [requests] key in requests.resume(key) })
        switch entry {
        case .taking:
            return .YES
        case .waiting:
            // Waiting its turn is the server's time: the pool's allowance is added to the deadline.
            deadlines.allow(connection, seconds: sinks.waitAllowance)
            return .YES
        case .sealed:
            exchange.answered = true
            return queue(APIError.shuttingDown.response, on: connection, method: method, route: route, exchange: exchange)
        }
    }

    /// Every later call: the turn that resumed its head, a piece, or the end.
    func continueStream(_ stream: StreamedBody, exchange: Exchange, on connection: OpaquePointer, method: String,
                        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        let size = uploadSize.pointee
        if stream.isRefused {
            // Answered by the stop midway: the rest is read and dropped, the end closes.
            uploadSize.pointee = 0
            return size > 0 ? .YES : .NO
        }
        guard size > 0 else {
            if stream.takeResumeAtHead() { return .YES }  // its turn came: now the body may come
            return endStream(stream, exchange: exchange, on: connection, method: method)
        }
        // Offered the next piece while one is out (a chunked body): it stays in libmicrohttpd's
        // buffer until the connection is resumed.
        if stream.hasPieceOut { return .YES }
        uploadSize.pointee = 0
        guard !exchange.answered, let upload else { return .YES }
        // Past its limit the rest is read and dropped, to be answered 413 at the end.
        if exchange.tooLarge || size > stream.sink.limit - exchange.received {
            exchange.discarded += size
            return exchange.discarded > Self.discardLimit ? .NO : .YES
        }
        exchange.received += size
        let piece = Array(UnsafeRawBufferPointer(start: upload, count: size))
        // The time the sink takes is the server's, not the client's, up to the judging
        // allowance (RequestDeadlines).
        deadlines.working(connection)
        // Sealed: the stop answers this body midway (it is arriving), so the piece is dropped.
        guard let key = requests.park(connection, refuse: nil) else { return .YES }
        MHD_suspend_connection(connection)
        nonisolated(unsafe) let handle = connection
        stream.handOver(piece) { [requests, deadlines] in
            requests.resume(key) { deadlines.worked(handle, bytes: size) }
        }
        return .YES
    }

    /// The last call: the body is all in, and its answer is made on the pool.
    private func endStream(_ stream: StreamedBody, exchange: Exchange, on connection: OpaquePointer, method: String) -> MHD_Result {
        guard !exchange.answered else { return .YES }
        exchange.answered = true
        if let key = exchange.arriving { requests.arrived(key) }
        exchange.arriving = nil
        deadlines.answering(connection)  // the whole body is in; finishing it is the server's time
        if exchange.tooLarge {
            stream.abandon()
            return queue(APIError.bodyTooLarge(limit: stream.sink.limit).response, on: connection, method: method,
                         route: stream.route, exchange: exchange)
        }
        let made = HTTPResponse.later { finish in
            let finishing = stream.finish { response in
                let made = MadeResponse(response: response)
                finish { made.response }
            }
            if !finishing { finish { APIError.shuttingDown.response } }
        }
        return answer(made, on: connection, method: method, route: stream.route, exchange: exchange)
    }

    /// An answer as bytes on the wire, closing its connection.
    static func wireBytes(_ response: HTTPResponse) -> [UInt8] {
        let reason = response.status == 503 ? "Service Unavailable" : "Error"
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for (name, value) in response.headers where name.lowercased() != "connection" { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\nContent-Length: \(response.body.count)\r\n\r\n"
        return Array(head.utf8) + response.body
    }
}

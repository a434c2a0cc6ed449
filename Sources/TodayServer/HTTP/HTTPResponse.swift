import TodayHost

/// What a handler answers.
package struct HTTPResponse {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// Set for an answer that is not ready yet: the server parks the connection (no thread
    /// waits) and calls this with `finish`; the work calls `finish` from any thread with a
    /// closure that makes the response, which then runs on the server's thread.
    package var deferred: (@Sendable (_ finish: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) -> Void)?
    /// Set for a Server-Sent Events answer: the body is whatever is pushed into the stream.
    package var stream: EventStream?

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    package static let jsonContentType = "application/json; charset=utf-8"

    package static func json(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        var bytes: [UInt8] = []
        value.write(to: &bytes)
        return HTTPResponse(status: status, headers: [("Content-Type", jsonContentType)] + headers, body: bytes)
    }

    /// JUnit XML (a verdict for a CI system).
    package static func junit(_ xml: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/xml; charset=utf-8")], body: Array(xml.utf8))
    }

    /// A JSON body assembled from pieces already encoded (stored timeline entries).
    package static func jsonBytes(_ bytes: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", jsonContentType)], body: bytes)
    }

    /// An answer made later, when `work` finishes.
    package static func later(_ work: @escaping @Sendable (_ finish: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) -> Void) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.deferred = work
        return response
    }
}

import TodayHost

/// The one error type of the HTTP edge; every failure becomes an RFC 9457 problem document
/// with a stable `code` (API: Errors).
package struct APIError: Error, Equatable {
    package var code: String
    package var status: Int
    package var detail: String
    package var field: String?
    package var headers: [(String, String)] = []
    /// For the server log only, never sent (an `internal` error's cause).
    package var logDetail: String?

    package static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.code == rhs.code && lhs.status == rhs.status && lhs.detail == rhs.detail && lhs.field == rhs.field
    }

    package static func invalidJSON(_ detail: String) -> APIError {
        APIError(code: "invalid_json", status: 400, detail: detail)
    }

    package static func invalidField(_ field: String, _ detail: String) -> APIError {
        APIError(code: "invalid_field", status: 400, detail: "\(field): \(detail)", field: field)
    }

    package static func unknownInput(_ detail: String) -> APIError {
        APIError(code: "unknown_input", status: 400, detail: detail)
    }

    package static func sessionNotFound(_ id: String) -> APIError {
        APIError(code: "session_not_found", status: 404, detail: "no session with id \(id)")
    }

    /// `meant`: the path a typo most likely meant and its methods (`Router.nearest`).
    package static func notFound(_ path: String, meant: (path: String, methods: [String])? = nil) -> APIError {
        let hint = meant.map { "; did you mean \($0.methods.joined(separator: ", ")) \($0.path)?" } ?? ""
        return APIError(code: "not_found", status: 404, detail: "no such path: \(path)\(hint)")
    }

    package static func methodNotAllowed(_ method: String, allowed: [String]) -> APIError {
        APIError(code: "method_not_allowed", status: 405,
                 detail: "\(method) is not allowed here; allowed: \(allowed.joined(separator: ", "))",
                 headers: [("Allow", allowed.joined(separator: ", "))])
    }

    package static func sessionExists(_ id: String) -> APIError {
        APIError(code: "session_exists", status: 409, detail: "a session with id \(id) already exists")
    }

    package static let sessionClosed = APIError(code: "session_closed", status: 409,
                                               detail: "the session is closed: it stays readable but takes no input")

    package static let clockNotVirtual = APIError(code: "clock_not_virtual", status: 409,
                                                 detail: "this session runs on the wall clock; /clock moves only virtual clocks")

    package static let payloadTooLarge = APIError(code: "payload_too_large", status: 413,
                                                 detail: "request bodies are at most 1 MiB")

    /// A body read as it arrives (a host trace) past its own limit.
    package static func bodyTooLarge(limit: Int) -> APIError {
        APIError(code: "payload_too_large", status: 413, detail: "this body is at most \(limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes")")
    }

    package static func invalidTrace(_ problem: TraceProblem, hint: String = "") -> APIError {
        APIError(code: "invalid_trace", status: 400, detail: problem.problemDetail + hint, field: problem.problemField)
    }

    /// Two traces that cannot be compared: a bad one (`invalid_trace`, `field` `a: line N`), or
    /// inputs that do not align (`traces_not_comparable`).
    static func tracePair(_ problem: TracePairProblem) -> APIError {
        switch problem {
        case .invalidTrace:
            return APIError(code: "invalid_trace", status: 400, detail: problem.problemDetail, field: problem.problemField)
        case .notComparable:
            return APIError(code: "traces_not_comparable", status: 400, detail: problem.problemDetail, field: problem.problemField)
        }
    }

    package static func unsupportedMediaType(_ detail: String) -> APIError {
        APIError(code: "unsupported_media_type", status: 415, detail: detail)
    }

    /// A request whose framing two HTTP hops could read differently (request smuggling, issue
    /// 12 item 4); the connection is closed after it.
    package static func malformedRequest(_ detail: String) -> APIError {
        APIError(code: "malformed_request", status: 400, detail: detail, headers: [("Connection", "close")])
    }

    package static let unsupportedTransferEncoding = APIError(
        code: "unsupported_transfer_encoding", status: 501,
        detail: "the only Transfer-Encoding taken is a single `chunked`", headers: [("Connection", "close")])

    /// A request on a connection past `--max-connections` (issue 12, item 11); it is closed.
    package static let tooManyConnections = APIError(
        code: "too_many_connections", status: 503,
        detail: "the server holds as many connections as it serves at once; retry shortly, or reuse a connection",
        headers: [("Retry-After", "1"), ("Connection", "close")])

    /// A request that arrived while the server stops (issue 12, item 2): nothing was applied.
    package static let shuttingDown = APIError(code: "shutting_down", status: 503,
                                              detail: "the server is stopping; nothing was applied: retry on a new connection",
                                              headers: [("Retry-After", "1")])

    /// A parked request whose answer was not ready when the stop's grace ran out: its input may
    /// still be applied, so only a retry with the same `Idempotency-Key` is safe.
    package static let notAnsweredInTime = APIError(
        code: "shutting_down", status: 503,
        detail: "the server stopped before this answer was ready; the input may have been applied: retry with the same Idempotency-Key",
        headers: [("Retry-After", "1")])

    /// A streamed body (a host trace) that waited for a free judge as long as its request may
    /// take (`--connection-timeout-seconds`): nothing of it was read.
    package static let judgesBusy = APIError(
        code: "judges_busy", status: 503,
        detail: "every trace judge was busy for as long as a request may wait; nothing was judged: retry later, or serve with more --trace-threads",
        headers: [("Retry-After", "5")])

    package static let internalError = APIError(code: "internal", status: 500,
                                               detail: "an unexpected error; details are in the server log")

    static let titles: [String: String] = [
        "invalid_json": "Invalid JSON", "invalid_field": "Invalid field", "unknown_input": "Unknown input",
        "unauthorized": "Unauthorized", "session_not_found": "Session not found", "not_found": "Not found",
        "method_not_allowed": "Method not allowed", "session_exists": "Session exists",
        "session_closed": "Session closed", "precondition_failed": "Precondition failed",
        "idempotency_conflict": "Idempotency conflict", "clock_not_virtual": "Clock not virtual",
        "payload_too_large": "Payload too large", "invalid_trace": "Invalid trace", "traces_not_comparable": "Traces not comparable",
        "unsupported_media_type": "Unsupported media type", "internal": "Internal error",
        "insufficient_storage": "Insufficient storage", "storage_unavailable": "Storage unavailable",
        "shutting_down": "Shutting down", "judges_busy": "Judges busy", "too_many_connections": "Too many connections", "malformed_request": "Malformed request",
        "unsupported_transfer_encoding": "Unsupported transfer encoding",
    ]

    /// `application/problem+json`.
    package var response: HTTPResponse {
        var members: [(String, JSON)] = [
            ("type", .string("/problems/\(code)")), ("title", .string(APIError.titles[code] ?? code)),
            ("status", .int(status)), ("detail", .string(detail)), ("code", .string(code)),
        ]
        if let field { members.append(("field", .string(field))) }
        var bytes: [UInt8] = []
        JSON.object(members).write(to: &bytes)
        return HTTPResponse(status: status, headers: [("Content-Type", "application/problem+json")] + headers, body: bytes)
    }
}

extension APIError {
    /// How the engine's refusals read over HTTP.
    init(_ error: InputError) {
        switch error {
        case let .invalidField(field, detail): self = .invalidField(field, detail)
        case .sessionClosed: self = .sessionClosed
        case .clockNotVirtual: self = .clockNotVirtual
        }
    }
}

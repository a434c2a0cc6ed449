import Foundation
import TodayHost
import TodayStore

/// The JSON bodies the API answers with.
enum Responses {
    /// API: Input responses — the entries and the view spliced in as already encoded.
    static func input(_ write: SessionStore.Write, view: [UInt8]) -> HTTPResponse {
        let outcome = write.applied.outcome
        var bytes: [UInt8] = []
        bytes.reserveCapacity(view.count + write.entries.reduce(256) { $0 + $1.count + 1 })
        bytes += Array(#"{"outcome":"#.utf8)
        JSON.string(outcome.name).write(to: &bytes)
        bytes += Array(#","reason":"#.utf8)
        JSON.string(outcome.reason).write(to: &bytes)
        bytes += Array(#","resolution":"#.utf8)
        write.applied.resolution.write(to: &bytes)
        bytes += Array(#","entries":["#.utf8)
        for (index, entry) in write.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry
        }
        bytes += Array(#"],"session":"#.utf8)
        bytes += view
        bytes.append(UInt8(ascii: "}"))
        return .jsonBytes(bytes)
    }

    /// `{"entries":[…], "next", "more"}`, the stored entry bytes spliced in as they are.
    static func timelineBytes(_ page: SessionStore.TimelinePage) -> [UInt8] {
        var bytes = Array(#"{"entries":["#.utf8)
        for (index, entry) in page.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry
        }
        bytes += Array(#"],"next":\#(page.next),"more":\#(page.more)}"#.utf8)
        return bytes
    }
}

extension APIError {
    /// How the store's refusals read over HTTP; anything unexpected is a 500.
    init(_ error: StoreError) {
        switch error {
        case let .sessionNotFound(id): self = .sessionNotFound(id)
        case let .sessionExists(id): self = .sessionExists(id)
        case let .input(inputError): self = APIError(inputError)
        case let .idempotencyConflict(key):
            self = APIError(code: "idempotency_conflict", status: 422,
                            detail: "Idempotency-Key \(key) was already used for a different request")
        case let .badStep(index, step):
            self = APIError(code: step.code, status: step.status, detail: "step \(index): \(step.detail)", field: step.field)
        case let .versionMismatch(expected, current):
            self = APIError(code: "precondition_failed", status: 412,
                            detail: "If-Match names version \(expected) but the session is at version \(current)")
        case .storageFull:
            // Not 500: nothing is wrong with the request, and a retry succeeds once there is room.
            self = APIError(code: "insufficient_storage", status: 507,
                            detail: "the server's disk is full; nothing was written; retry later",
                            headers: [("Retry-After", "10")])
        case .storageUnavailable:
            // The cause (which may name the file) goes to the log once, when storage changes
            // state, and to `/readyz`; not to clients, and not once per request.
            self = APIError(code: "storage_unavailable", status: 503,
                            detail: "the server cannot write its database now; nothing was written; retry later",
                            headers: [("Retry-After", "5")])
        case .outcomeUnknown:
            // Not acknowledged: the database may have committed the input before the
            // connection broke. A keyed retry is answered from what is stored.
            self = APIError(code: "storage_unavailable", status: 503,
                            detail: "the connection to the database broke while this request was being committed, so it may have been applied; retry with the same Idempotency-Key (answered from the stored outcome), or read the session first",
                            headers: [("Retry-After", "5")])
        case .newerSchema, .database, .postgres, .corrupt, .inUse, .foreign, .unusable, .damaged:
            self = .internalError
            logDetail = error.description
        }
    }
}

/// `ETag` / `If-None-Match` for polling clients: an unchanged resource answers `304` with no body.
enum Conditional {
    static let cacheControl = ("Cache-Control", "no-cache")

    /// `body` with its tag, or `304` when the client already has that tag.
    static func respond(_ request: HTTPRequest, tag: String, body: [UInt8]) -> HTTPResponse {
        respond(ifNoneMatch: request.header("If-None-Match"), tag: tag, body: body)
    }

    static func respond(ifNoneMatch: String?, tag: String, body: [UInt8]) -> HTTPResponse {
        let etag = "\"\(tag)\""
        if let known = ifNoneMatch,
           known.split(separator: ",").contains(where: { candidate in
               let trimmed = candidate.trimmingCharacters(in: .whitespaces)
               return trimmed == "*" || trimmed == etag || trimmed == "W/" + etag
           })
        {
            return HTTPResponse(status: 304, headers: [("ETag", etag), cacheControl])
        }
        var response = HTTPResponse.jsonBytes(body)
        response.headers += [("ETag", etag), cacheControl]
        return response
    }

    /// `If-Match: <version>` on an input (quotes and `W/` allowed); `nil` without the header.
    static func expectedVersion(_ request: HTTPRequest) throws(APIError) -> Int? {
        guard let text = request.header("If-Match") else { return nil }
        var value = text.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("W/") { value.removeFirst(2) }
        value = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard let version = Int(value), version >= 1 else {
            throw .invalidField("If-Match", "must be a session version (a positive integer)")
        }
        return version
    }
}

/// `Idempotency-Key` on a POST: a retry with the same key and request gets the first answer
/// back without applying again; the same key with another request is `422`.
enum IdempotencyKeys {
    /// How long a key is remembered.
    static let windowMs: Millis = 24 * 60 * 60 * 1000

    /// The request's key and fingerprint, or `nil` without the header. The fingerprint holds
    /// the `fieldValidation` mode (the same body is another request under another mode); under
    /// the default `Warn` it is the method, path and body alone, as before modes existed.
    static func key(_ request: HTTPRequest, mode: FieldValidation, render: @escaping @Sendable ([SessionStore.Write]) -> [UInt8])
        throws(APIError) -> SessionStore.Idempotency?
    {
        guard let key = request.header("Idempotency-Key") else { return nil }
        guard !key.isEmpty, key.utf8.count <= 255 else { throw .invalidField("Idempotency-Key", "must be 1 to 255 characters") }
        if let problem = FieldLimits.identifierProblem(key) { throw .invalidField("Idempotency-Key", problem) }
        let modeLine = mode == .warn ? "" : "fieldValidation=\(mode.rawValue)\n"
        let fingerprint = SHA1.digest(Array("\(request.method) \(request.path)\n\(modeLine)".utf8) + request.body)
        return SessionStore.Idempotency(key: key, fingerprint: fingerprint, render: render)
    }

    /// The answer to a keyed request.
    static func respond(_ result: Result<SessionStore.KeyedAnswer, StoreError>, log: RequestLog) -> HTTPResponse {
        switch result {
        case let .success(.applied(_, answer)):
            return .jsonBytes(answer)
        case let .success(.replayed(answer)):
            var response = HTTPResponse.jsonBytes(answer)
            response.headers.append(("Idempotent-Replayed", "true"))
            return response
        case let .failure(error):
            let problem = APIError(error)
            if let detail = problem.logDetail { log.note("keyed input: \(detail)") }
            return problem.response
        }
    }
}


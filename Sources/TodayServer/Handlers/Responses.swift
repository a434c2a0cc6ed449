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
        case let .badStep(index, step):
            self = APIError(code: step.code, status: step.status, detail: "step \(index): \(step.detail)", field: step.field)
        case let .versionMismatch(expected, current):
            self = APIError(code: "precondition_failed", status: 412,
                            detail: "If-Match names version \(expected) but the session is at version \(current)")
        case .newerSchema, .database, .corrupt:
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


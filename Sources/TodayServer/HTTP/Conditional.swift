import Foundation
import TodayHost
import TodayStore

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

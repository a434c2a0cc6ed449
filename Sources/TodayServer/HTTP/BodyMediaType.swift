import Foundation

/// Which `Content-Type`s a request body may carry (issue 7, abuse: wrong content types get a
/// clear `415`). Bodies are always read as JSON; the types accepted besides JSON are the ones
/// ordinary clients send for JSON without being asked: `curl -d` sends
/// `application/x-www-form-urlencoded` (the README's examples rely on it) and a browser's
/// preflight-free `fetch`/`sendBeacon` sends `text/plain`. No `Content-Type` at all is fine too.
enum BodyMediaType {
    static let accepted: Set<String> = ["application/json", "text/plain", "application/x-www-form-urlencoded"]
    static let charsets: Set<String> = ["utf-8", "utf8", "us-ascii"]

    /// `nil` when a body of this type is read, else the `415` to answer.
    static func refusal(contentType: String?) -> APIError? {
        // The type nearly every request sends, without Foundation's trimming and lowering
        // (4% of a write's CPU).
        guard let contentType, contentType != "application/json" else { return nil }
        let type = mediaType(contentType)
        guard accepted.contains(type) || type.hasSuffix("+json") else {
            return .unsupportedMediaType("request bodies are JSON (application/json); got Content-Type \(type.isEmpty ? "(empty)" : type)")
        }
        return charsetRefusal(contentType)
    }

    /// The media type of `contentType`, lowercased, without its parameters.
    static func mediaType(_ contentType: String) -> String {
        contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    }

    /// The `415` for a charset other than UTF-8, else `nil`.
    static func charsetRefusal(_ contentType: String) -> APIError? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for parameter in parts.dropFirst() where parameter.hasPrefix("charset=") {
            let charset = parameter.dropFirst("charset=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard charsets.contains(charset) else {
                return .unsupportedMediaType("request bodies are UTF-8; got charset \(charset)")
            }
        }
        return nil
    }
}

/// A `multipart/form-data` body (RFC 7578) read whole: its parts by name, as
/// `curl -F a=@ios.jsonl -F b=@android.jsonl` sends them (`POST /v1/host-traces/compare`).
struct MultipartForm {
    struct Part {
        var name: String
        /// The part's own `Content-Type`, lowercased, without parameters (`nil`: none given).
        var contentType: String?
        var body: ArraySlice<UInt8>
    }

    var parts: [Part]

    /// The boundary a request's `Content-Type` names, or `nil` when it is not `multipart/form-data`
    /// with one.
    static func boundary(of contentType: String) -> String? {
        guard BodyMediaType.mediaType(contentType) == "multipart/form-data" else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return value.isEmpty || value.count > 200 ? nil : value
        }
        return nil
    }

    /// Splits `body` at `boundary`; a malformed body is `400 invalid_field` (`body`) saying how.
    init(_ body: [UInt8], boundary: String) throws(APIError) {
        let delimiter = Array("--\(boundary)".utf8)
        let malformed = { (what: String) in APIError.invalidField("body", "a multipart/form-data body \(what)") }
        guard var at = Self.find(delimiter, in: body, from: 0) else { throw malformed("holds no part delimited by its boundary") }
        var parts: [Part] = []
        while true {
            at += delimiter.count
            if body[at...].starts(with: Array("--".utf8)) { break }  // the closing delimiter
            guard body[at...].starts(with: Array("\r\n".utf8)) else { throw malformed("has a boundary line that is not followed by CRLF") }
            let headersStart = at + 2
            guard let headersEnd = Self.find(Array("\r\n\r\n".utf8), in: body, from: headersStart) else {
                throw malformed("has a part whose headers never end")
            }
            guard let next = Self.find(Array("\r\n".utf8) + delimiter, in: body, from: headersEnd + 4) else {
                throw malformed("ends before its closing boundary")
            }
            var part = Part(name: "", contentType: nil, body: body[(headersEnd + 4)..<next])
            let headers = String(decoding: body[headersStart..<headersEnd], as: UTF8.self)
            for header in headers.components(separatedBy: "\r\n") {
                let pair = header.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "content-disposition": part.name = Self.name(inDisposition: pair[1]) ?? ""
                case "content-type": part.contentType = BodyMediaType.mediaType(pair[1])
                default: break
                }
            }
            guard !part.name.isEmpty else { throw malformed("has a part without a Content-Disposition name") }
            parts.append(part)
            at = next + 2
        }
        self.parts = parts
    }

    /// `name="a"` of `form-data; name="a"; filename="ios.jsonl"`.
    private static func name(inDisposition value: String) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "name" else { continue }
            return pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
        }
        return nil
    }

    /// Where `needle` first occurs in `haystack` at or after `start`.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            guard let candidate = haystack[index...(haystack.count - needle.count)].firstIndex(of: first) else { return nil }
            if haystack[candidate..<(candidate + needle.count)].elementsEqual(needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}

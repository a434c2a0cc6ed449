import TodayHost
import TodayStore

/// Unknown fields in control-plane bodies (API: Conventions, `fieldValidation`): the mode is the
/// request's `?fieldValidation=`, else the server's `--field-validation` (default `Warn`).
struct FieldChecks: Sendable {
    var serverMode: FieldValidation = .warn

    func mode(_ request: HTTPRequest) throws(APIError) -> FieldValidation {
        guard let name = request.query("fieldValidation") else { return serverMode }
        guard let mode = FieldValidation(name: name) else {
            throw .invalidField("fieldValidation", "must be one of \(FieldValidation.choices) (in any case), got \"\(name)\"")
        }
        return mode
    }

    /// The warnings a body (as the request's decoding parsed it) earns under the request's mode;
    /// `Strict` refuses it instead.
    func check(_ request: HTTPRequest, _ body: JSON, as kind: ControlBody) throws(APIError) -> FieldWarnings {
        let mode = try mode(request)
        guard mode != .ignore else { return FieldWarnings(mode: mode) }
        return try FieldWarnings(mode: mode, found: kind.unknownFields(in: body))
    }
}

/// What a request's unknown fields add to its answer: `warnings` in the body (only when there
/// are some) and one `Warning: 299` header each.
struct FieldWarnings: Sendable {
    let mode: FieldValidation
    private(set) var listed: [FieldWarning] = []

    /// The most warnings an answer lists; past it, one more counts the rest.
    static let most = 100

    init(mode: FieldValidation) {
        self.mode = mode
    }

    /// `found` under `mode`: listed (at most `most`), dropped, or refused as `400 invalid_field`
    /// naming the first (`Strict`: nothing is applied).
    init(mode: FieldValidation, found: [FieldWarning]) throws(APIError) {
        self.mode = mode
        guard let first = found.first, mode != .ignore else { return }
        if mode == .strict {
            let others = found.count > 1 ? " (and \(found.count - 1) more unknown fields)" : ""
            throw .invalidField(first.field, "\(first.detail)\(others); fieldValidation is Strict, so nothing was applied")
        }
        listed = Array(found.prefix(Self.most))
        if found.count > Self.most {
            listed.append(FieldWarning(field: "body", detail: "\(found.count - Self.most) more unknown fields are not listed"))
        }
    }

    var isEmpty: Bool { listed.isEmpty }

    /// `bytes` (a JSON object) with `"warnings":[…]` as its first member.
    func adding(to bytes: [UInt8]) -> [UInt8] { WriteAnswer.adding(listed, to: bytes) }

    /// `Warning: 299 - "…"` (RFC 7234's miscellaneous persistent warning) per listed warning;
    /// the text is printable ASCII, so no field a client sent can break the header.
    var headers: [(String, String)] {
        listed.map { warning in
            var text = ""
            for scalar in "\(warning.field): \(warning.detail)".unicodeScalars.prefix(300) {
                switch scalar {
                case "\"", "\\": text += "\\" + String(scalar)
                case " "..."~": text.unicodeScalars.append(scalar)
                default: text += "?"
                }
            }
            return ("Warning", "299 - \"\(text)\"")
        }
    }

    /// The answer with its warnings: in the body and as headers.
    func adding(to response: HTTPResponse) -> HTTPResponse {
        guard !listed.isEmpty, response.status < 300 else { return response }
        var answered = response
        answered.body = adding(to: response.body)
        answered.headers += headers
        return answered
    }
}

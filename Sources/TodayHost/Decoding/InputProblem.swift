/// Why a body the contract takes was refused: the HTTP edge answers it `400` with `code`, a host
/// trace reports it on the line that holds the input.
package struct InputProblem: Error, Equatable, Sendable {
    package enum Code: String, Sendable {
        case invalidJSON = "invalid_json", invalidField = "invalid_field", unknownInput = "unknown_input"
    }

    package var code: Code
    /// One sentence; for a field, it begins with the field's name.
    package var detail: String
    package var field: String?

    package static func invalidJSON(_ detail: String) -> InputProblem {
        InputProblem(code: .invalidJSON, detail: detail)
    }

    package static func invalidField(_ field: String, _ detail: String) -> InputProblem {
        InputProblem(code: .invalidField, detail: "\(field): \(detail)", field: field)
    }

    package static func unknownInput(_ detail: String) -> InputProblem {
        InputProblem(code: .unknownInput, detail: detail)
    }

    /// The engine's refusal of a setting (`SessionConfig.validate`).
    package init(_ error: InputError) {
        switch error {
        case let .invalidField(field, detail): self = .invalidField(field, detail)
        case .sessionClosed: self = .invalidField("body", "the session is closed")
        case .clockNotVirtual: self = .invalidField("body", "the session runs on the wall clock")
        }
    }

    package init(code: Code, detail: String, field: String? = nil) {
        self.code = code
        self.detail = detail
        self.field = field
    }
}

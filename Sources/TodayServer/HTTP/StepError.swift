import TodayHost
import TodayStore

/// Why one step of a batch was refused, as the API reports it (`step N: …` in the problem
/// document): the store's `StepFailure` in the contract's codes, and the server's own refusals
/// of a step it could not make (a body that does not decode, a `$ref` that does not resolve).
struct StepError: Error, Equatable, Sendable {
    var code: String
    var status: Int
    var detail: String
    var field: String?

    init(code: String, status: Int, detail: String, field: String? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.field = field
    }

    /// A step the server could not make, as its `APIError` says.
    init(_ error: APIError) {
        self.init(code: error.code, status: error.status, detail: error.detail, field: error.field)
    }

    /// The engine's refusals, in the contract's codes.
    init(_ error: InputError) {
        switch error {
        case let .invalidField(field, detail):
            self.init(code: "invalid_field", status: 400, detail: "\(field): \(detail)", field: field)
        case .sessionClosed:
            self.init(code: "session_closed", status: 409, detail: "the session is closed")
        case .clockNotVirtual:
            self.init(code: "clock_not_virtual", status: 409, detail: "this session runs on the wall clock")
        }
    }

    init(_ failure: StepFailure) {
        switch failure {
        case let .refused(error):
            self.init(error)
        case let .answerTooLarge(limitBytes):
            self.init(code: "invalid_field", status: 400,
                      detail: "the batch's answer would pass \(limitBytes >> 20) MiB (each step's result carries the session view); send fewer steps per batch",
                      field: "steps")
        case let .unresolved(problem):
            self.init(APIError(problem))
        }
    }
}

import Foundation
import TodayHost
import TodayStore

/// `Idempotency-Key` on a POST: a retry with the same key and request gets the first answer
/// back without applying again; the same key with another request is `422`.
enum IdempotencyKeys {
    /// How long a key is remembered.
    static let windowMs: Millis = 24 * 60 * 60 * 1000

    /// The request's key and fingerprint, or `nil` without the header. The fingerprint holds
    /// the `fieldValidation` mode (the same body is another request under another mode); under
    /// the default `Warn` it is the method, path and body alone, as before modes existed.
    static func key(_ request: HTTPRequest, mode: FieldValidation, answer: WriteAnswer, warnings: [FieldWarning])
        throws(APIError) -> SessionStore.Idempotency?
    {
        guard let key = request.header("Idempotency-Key") else { return nil }
        guard !key.isEmpty, key.utf8.count <= 255 else { throw .invalidField("Idempotency-Key", "must be 1 to 255 characters") }
        if let problem = FieldLimits.identifierProblem(key) { throw .invalidField("Idempotency-Key", problem) }
        let modeLine = mode == .warn ? "" : "fieldValidation=\(mode.rawValue)\n"
        let fingerprint = SHA1.digest(Array("\(request.method) \(request.path)\n\(modeLine)".utf8) + request.body)
        return SessionStore.Idempotency(key: key, fingerprint: fingerprint, answer: answer, warnings: warnings)
    }
}

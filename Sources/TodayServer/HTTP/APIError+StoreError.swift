import Foundation
import TodayHost
import TodayStore

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
        case let .badStep(index, failure):
            let step = StepError(failure)
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

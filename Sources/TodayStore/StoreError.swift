import TodayHost

/// Why the store refused or failed an operation.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    case sessionNotFound(String)
    case sessionExists(String)
    /// The input was refused by the session; nothing was written.
    case input(InputError)
    case newerSchema(found: Int64, supported: Int64)
    case database(SQLiteError)
    /// A stored row could not be read back.
    case corrupt(String)
    /// Step `index` of a batch could not be applied; the whole batch changed nothing.
    case badStep(index: Int, StepError)
    /// An `Idempotency-Key` already answered a different request.
    case idempotencyConflict(String)
    /// `If-Match` named a version the session has moved past.
    case versionMismatch(expected: Int, current: Int)

    public var description: String {
        switch self {
        case let .sessionNotFound(id): return "no session \(id)"
        case let .sessionExists(id): return "session \(id) exists"
        case let .input(error): return "input refused: \(error)"
        case let .newerSchema(found, supported):
            return "the database was written by a newer todaysim (schema \(found); this one knows up to \(supported))"
        case let .database(error): return error.description
        case let .corrupt(detail): return "stored data cannot be read: \(detail)"
        case let .badStep(index, error): return "step \(index): \(error.detail)"
        case let .idempotencyConflict(key): return "Idempotency-Key \(key) was used for a different request"
        case let .versionMismatch(expected, current):
            return "the session is at version \(current), not \(expected) as If-Match requires"
        }
    }

    public static func == (lhs: StoreError, rhs: StoreError) -> Bool {
        lhs.description == rhs.description
    }
}

/// Why one step of a batch was refused, as the HTTP edge will report it.
public struct StepError: Error, Equatable, Sendable {
    public var code: String
    public var status: Int
    public var detail: String
    public var field: String?

    public init(code: String, status: Int, detail: String, field: String? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.field = field
    }
}


import TodayHost

/// Why the store refused or failed an operation.
package enum StoreError: Error, Equatable, CustomStringConvertible {
    case sessionNotFound(String)
    case sessionExists(String)
    /// The input was refused by the session; nothing was written.
    case input(InputError)
    case newerSchema(found: Int64, supported: Int64)
    case database(SQLiteError)
    /// A PostgreSQL statement failed (not for want of a connection: that is `storageUnavailable`).
    case postgres(PostgresError)
    /// A stored row could not be read back.
    case corrupt(String)
    /// Step `index` of a batch could not be applied; the whole batch changed nothing.
    case badStep(index: Int, StepFailure)
    /// An `Idempotency-Key` already answered a different request.
    case idempotencyConflict(String)
    /// `If-Match` named a version the session has moved past.
    case versionMismatch(expected: Int, current: Int)
    /// At start: another todaysim process (`holder`, when known) serves this database file.
    case inUse(path: String, holder: Int32?)
    /// At start: the file is not a todaysim database; it was left untouched.
    case foreign(path: String, reason: String)
    /// At start: the file cannot be served (read-only, lock file not creatable, …).
    case unusable(path: String, reason: String)
    /// At start: `PRAGMA quick_check` found damage.
    case damaged(path: String, detail: String)
    /// The disk (or the process's file size limit) is full: nothing was written.
    case storageFull(String)
    /// Writes are refused: the database file was deleted or replaced under the server, or the
    /// store is closed. Nothing was written.
    case storageUnavailable(String)
    /// The connection to the database broke while a transaction was being committed: it may
    /// or may not have been (PostgreSQL). Never acknowledged; a keyed retry finds out.
    case outcomeUnknown(String)

    package var description: String {
        switch self {
        case let .sessionNotFound(id): return "no session \(id)"
        case let .sessionExists(id): return "session \(id) exists"
        case let .input(error): return "input refused: \(error)"
        case let .newerSchema(found, supported):
            return "the database was written by a newer todaysim (schema \(found); this one knows up to \(supported))"
        case let .database(error): return error.description
        case let .postgres(error): return error.description
        case let .corrupt(detail): return "stored data cannot be read: \(detail)"
        case let .badStep(index, failure): return "step \(index): \(failure)"
        case let .idempotencyConflict(key): return "Idempotency-Key \(key) was used for a different request"
        case let .versionMismatch(expected, current):
            return "the session is at version \(current), not \(expected) as If-Match requires"
        case let .inUse(_, holder):
            let who = holder.map { "another todaysim (pid \($0))" } ?? "another todaysim"
            return "it is in use by \(who); two servers on one file would lose each other's writes"
        case let .foreign(_, reason): return "\(reason); refused and left untouched"
        case let .unusable(_, reason): return reason
        case let .damaged(_, detail): return "it is damaged (quick_check: \(detail)); restore a copy or start a new file"
        case let .storageFull(detail): return "the disk is full: \(detail)"
        case let .storageUnavailable(detail): return "storage unavailable: \(detail)"
        case let .outcomeUnknown(detail): return "the outcome of a commit is unknown: \(detail)"
        }
    }

    package static func == (lhs: StoreError, rhs: StoreError) -> Bool {
        lhs.description == rhs.description
    }
}

/// Why one step of a batch was refused, in the store's terms (the whole batch changed
/// nothing). How each reads over HTTP is the server's (`TodayServer/HTTP/StepError.swift`).
package enum StepFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The session refused the step's input; nothing was written.
    case refused(InputError)
    /// The batch's answer would pass `limitBytes` (`SessionStore.maximumBatchAnswerBytes`).
    case answerTooLarge(limitBytes: Int)
    /// The step could not be made: its body did not decode, or a `$ref` in it did not resolve
    /// (`SessionStore.Step`).
    case unresolved(InputProblem)

    package var description: String {
        switch self {
        case let .refused(error): return "refused: \(error)"
        case let .answerTooLarge(limitBytes): return "the batch's answer would pass \(limitBytes) bytes"
        case let .unresolved(problem): return problem.detail
        }
    }

    package static func == (lhs: StepFailure, rhs: StepFailure) -> Bool {
        lhs.description == rhs.description
    }
}

extension StoreError {
    /// A failed PostgreSQL call as the store reports it: a lost connection is storage out of
    /// reach (503); anything else a failed statement.
    init(_ error: PostgresError) {
        self = error.isConnectionLost ? .storageUnavailable("PostgreSQL: \(error.message)") : .postgres(error)
    }
}

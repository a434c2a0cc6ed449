import Foundation
import TodayHost

/// `Idempotency-Key`: a keyed request's answer is stored with its input, in the same
/// transaction, and a second request with the key gets that answer, nothing applied again.
extension SessionStore {
    /// An `Idempotency-Key` with what identifies its request (method, path, body) and which
    /// `200` answer to store with the input: data, which the store encodes in the transaction
    /// (`WriteAnswer`), with the request's `warnings` (a replay carries them again).
    package struct Idempotency: Sendable {
        package let key: String
        package let fingerprint: [UInt8]
        package let answer: WriteAnswer
        package let warnings: [FieldWarning]

        package init(key: String, fingerprint: [UInt8], answer: WriteAnswer, warnings: [FieldWarning]) {
            self.key = key
            self.fingerprint = fingerprint
            self.answer = answer
            self.warnings = warnings
        }
    }

    /// Forgets idempotency keys older than `windowMs`.
    package func forgetIdempotencyKeys(olderThan windowMs: Millis) throws(StoreError) {
        _ = try writing { transaction throws(StoreError) in
            try transaction.forgetIdempotency(createdBefore: unixNow() - windowMs)
            return ((), nil)
        }
    }

    /// Stores a keyed request's answer in the transaction that applies it.
    func remember(_ pending: GroupCommit.Pending, _ writes: [Write], of session: StoredSession,
                          _ transaction: any StorageTransaction) throws(StoreError) {
        guard let idempotency = pending.idempotency else { return }
        let answer = idempotency.answer.bytes(of: writes, warnings: idempotency.warnings)
        pending.rendered = answer
        try transaction.insertIdempotency(ord: session.ord, key: idempotency.key, fingerprint: idempotency.fingerprint, answer: answer,
                                          createdMs: unixNow())
    }
}

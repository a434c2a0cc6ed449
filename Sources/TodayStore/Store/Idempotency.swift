import Foundation
import TodayHost

/// `Idempotency-Key`: a keyed request's answer is stored with its input, in the same
/// transaction, and a second request with the key gets that answer, nothing applied again.
extension SessionStore {
    /// An `Idempotency-Key` with what identifies its request (method, path, body) and how to
    /// render the `200` answer to store with the input: a function of the writes alone (their
    /// entries, `Write.viewBytes`), given before the transaction and called inside it, so it
    /// must not call the store.
    package struct Idempotency: Sendable {
        package let key: String
        package let fingerprint: [UInt8]
        package let render: @Sendable ([Write]) -> [UInt8]

        package init(key: String, fingerprint: [UInt8], render: @escaping @Sendable ([Write]) -> [UInt8]) {
            self.key = key
            self.fingerprint = fingerprint
            self.render = render
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
        let answer = idempotency.render(writes)
        pending.rendered = answer
        try transaction.insertIdempotency(ord: session.ord, key: idempotency.key, fingerprint: idempotency.fingerprint, answer: answer,
                                          createdMs: unixNow())
    }
}

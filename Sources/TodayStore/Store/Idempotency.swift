import Foundation
import TodayHost

/// `Idempotency-Key`: a keyed request's answer is stored with its input, in the same
/// transaction, and a second request with the key gets that answer, nothing applied again.
extension SessionStore {
    /// An `Idempotency-Key` with what identifies its request (method, path, body) and how to
    /// render the `200` answer to store with the input.
    public struct Idempotency: Sendable {
        public let key: String
        public let fingerprint: [UInt8]
        public let render: @Sendable ([Write]) -> [UInt8]

        public init(key: String, fingerprint: [UInt8], render: @escaping @Sendable ([Write]) -> [UInt8]) {
            self.key = key
            self.fingerprint = fingerprint
            self.render = render
        }
    }

    /// What a keyed request gets: the answer stored with its input when it was applied now, or
    /// the stored answer of the first request with the same key (nothing applied again).
    public enum KeyedAnswer: Sendable {
        case applied([Write], answer: [UInt8])
        case replayed(answer: [UInt8])
    }

    /// `applyAll` for a request that carries an `Idempotency-Key`.
    public func applyAll(_ steps: [Step], to id: String, ifVersion expectedVersion: Int?, idempotency: Idempotency,
                         completion: @escaping @Sendable (Result<KeyedAnswer, StoreError>) -> Void) {
        let pending = GroupCommit.Pending(steps: steps, sessionId: id, expectedVersion: expectedVersion) { _ in }
        pending.idempotency = idempotency
        pending.completion = { [unowned pending] result in
            if let replayed = pending.replayed { return completion(.success(.replayed(answer: replayed))) }
            completion(result.map { .applied($0, answer: pending.rendered ?? []) })
        }
        groupCommit.submit(pending)
    }

    /// Forgets idempotency keys older than `windowMs`.
    public func forgetIdempotencyKeys(olderThan windowMs: Millis) throws(StoreError) {
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

import Foundation
import TodayHost

/// Group commit: inputs that arrive while a transaction is being written wait, and the next
/// transaction carries all of them — each in its own savepoint, so one refused input changes
/// nothing while the others stand. Every caller gets its answer only after the transaction
/// holding its input has committed; nothing is answered before it is durable.
final class GroupCommit: @unchecked Sendable {
    /// One input waiting for its transaction.
    final class Pending {
        let input: Input
        let sessionId: String
        var result: Result<SessionStore.Write, StoreError>?

        init(input: Input, sessionId: String) {
            self.input = input
            self.sessionId = sessionId
        }
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [Pending] = []
    private var leaderActive = false

    /// Queues `pending`; the first caller to find no transaction running writes the whole queue
    /// with `commit`, the others wait for it.
    func submit(_ pending: Pending, commit: ([Pending]) -> Void) -> Result<SessionStore.Write, StoreError> {
        condition.lock()
        queue.append(pending)
        while true {
            if let result = pending.result {
                condition.unlock()
                return result
            }
            if !leaderActive {
                leaderActive = true
                let batch = queue
                queue = []
                condition.unlock()
                commit(batch)
                condition.lock()
                leaderActive = false
                condition.broadcast()
                continue
            }
            condition.wait()
        }
    }
}

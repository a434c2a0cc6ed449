import Dispatch
import Foundation
import TodayHost

/// Group commit: inputs that arrive while a transaction is being written wait, and the next
/// transaction carries all of them; one refused input writes nothing while the others stand.
/// Every caller gets its answer only after the transaction holding its input has committed;
/// nothing is answered before it is durable. Each waiter is woken on its own (no broadcast):
/// with its answer, or to lead the next transaction.
final class GroupCommit: @unchecked Sendable {
    /// One input waiting for its transaction.
    final class Pending {
        let input: Input
        let sessionId: String
        var result: Result<SessionStore.Write, StoreError>?
        fileprivate let wake = DispatchSemaphore(value: 0)

        init(input: Input, sessionId: String) {
            self.input = input
            self.sessionId = sessionId
        }
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var queue: [Pending] = []
    private var leaderActive = false

    /// Queues `pending`. With no transaction running the caller leads: it writes the queue with
    /// `commit` until it is empty or hands the lead to the next waiter.
    func submit(_ pending: Pending, commit: ([Pending]) -> Void) -> Result<SessionStore.Write, StoreError> {
        lock.lock()
        queue.append(pending)
        if leaderActive {
            lock.unlock()
            pending.wake.wait()
            if let result = pending.result { return result }
            // Woken without an answer: this caller leads the next transaction.
        } else {
            leaderActive = true
            lock.unlock()
        }
        lock.lock()
        let batch = queue
        queue = []
        lock.unlock()
        commit(batch)
        for waiter in batch where waiter !== pending { waiter.wake.signal() }
        lock.lock()
        if let next = queue.first {
            lock.unlock()
            next.wake.signal()
        } else {
            leaderActive = false
            lock.unlock()
        }
        guard let result = pending.result else { preconditionFailure("a committed batch left an input unanswered") }
        return result
    }
}

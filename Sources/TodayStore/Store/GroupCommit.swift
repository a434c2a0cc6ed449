import Foundation
import TodayHost

/// Group commit on one writer thread: inputs queue up while a transaction is being written,
/// and the next transaction carries all of them (one refused input writes nothing while the
/// others stand). Each caller is called back only after the transaction holding its input
/// has committed: nothing is answered before it is durable. The callbacks run on the store's
/// `Delivery` queue, not the writer thread. No caller's thread waits for the writer unless it
/// asks to (`SessionStore.apply`).
final class GroupCommit: @unchecked Sendable {
    /// One input waiting for its transaction. Filled in by its caller before `submit`, then
    /// only by the writer thread, then read by the completion it calls.
    final class Pending: @unchecked Sendable {
        /// One input, or a batch applied all or nothing.
        let steps: [SessionStore.Step]
        let sessionId: String
        /// `If-Match`: the version the session must still be at.
        let expectedVersion: Int?
        var result: Result<[SessionStore.Write], StoreError>?
        var completion: @Sendable (Result<[SessionStore.Write], StoreError>) -> Void
        /// `Idempotency-Key`: the answer is stored with the input, or replayed.
        var idempotency: SessionStore.Idempotency?
        /// The answer a repeat of the same key gets back (set instead of applying again).
        var replayed: [UInt8]?
        /// The answer stored for this key.
        var rendered: [UInt8]?
        /// Whether the steps are a batch even when there is one (`SessionStore.apply(steps:)`).
        let asBatch: Bool
        /// Several steps: a long transaction, written on its own.
        var isBatch: Bool { steps.count > 1 }

        init(steps: [SessionStore.Step], sessionId: String, expectedVersion: Int?, asBatch: Bool = false,
             completion: @escaping @Sendable (Result<[SessionStore.Write], StoreError>) -> Void) {
            self.steps = steps
            self.sessionId = sessionId
            self.expectedVersion = expectedVersion
            self.asBatch = asBatch
            self.completion = completion
        }
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var queue: [Pending] = []
    private var stopped = false
    private let commit: @Sendable ([Pending]) -> [String]
    private let observers: @Sendable () -> [@Sendable ([String]) -> Void]
    private let delivery: Delivery
    private var loop: BackgroundLoop!

    /// `commit` writes one batch, sets each input's result and returns the sessions to announce
    /// as changed; it runs on the writer thread. The change notice for the `observers` of that
    /// moment, then each input's completion, are handed to `delivery` together (the store
    /// itself is not: its last reference never goes on the delivery queue).
    init(delivery: Delivery, commit: @escaping @Sendable ([Pending]) -> [String],
         observers: @escaping @Sendable () -> [@Sendable ([String]) -> Void] = { [] }) {
        self.delivery = delivery
        self.commit = commit
        self.observers = observers
        loop = BackgroundLoop(name: "todaysim-writer", nextWake: { nil }) { [unowned self] in drain() }
        loop.start()
    }

    /// Writes what is queued until the queue is empty: all single inputs waiting share one
    /// transaction, then one multi-step batch gets its own, then the singles that arrived
    /// meanwhile, and so on — an ordinary input waits behind at most one long batch, never
    /// behind a queue of them (issue 12, item 10). Concurrent requests have no order among
    /// themselves; one client's requests, each awaited, keep theirs.
    private func drain() {
        while true {
            lock.lock()
            let singles = queue.filter { !$0.isBatch }
            let batch = queue.first { $0.isBatch }
            queue = Array(queue.filter(\.isBatch).dropFirst())
            lock.unlock()
            if singles.isEmpty, batch == nil { return }
            for group in [singles, batch.map { [$0] } ?? []] where !group.isEmpty {
                let changed = commit(group)
                // One hand-over a transaction (each wakes the delivery thread): the change
                // notices, then its answers in arrival order.
                let answers = group.map { pending in
                    guard let result = pending.result else { preconditionFailure("a committed batch left an input unanswered") }
                    return (pending, result)
                }
                let notified = changed.isEmpty ? [] : observers()
                delivery.deliver {
                    for observer in notified { observer(changed) }
                    for (pending, result) in answers { pending.completion(result) }
                }
            }
        }
    }

    /// Queues `pending`; once stopped, answers it at once with nothing written.
    func submit(_ pending: Pending) {
        lock.lock()
        guard !stopped else {
            lock.unlock()
            pending.completion(.failure(.storageUnavailable("the store is closed")))
            return
        }
        queue.append(pending)
        lock.unlock()
        loop.poke()
    }

    /// Stops the writer thread, then writes what was already queued: every input submitted
    /// before the stop is answered before it returns.
    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        loop.stop()
        drain()
        delivery.flush()
    }
}

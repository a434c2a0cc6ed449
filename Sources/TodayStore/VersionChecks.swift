import Foundation

/// Confirms cached sessions against shared storage for concurrent reads in one query (issue
/// 14, item 4): a reader that finds fewer than `parallel` checks under way runs one for every
/// reader waiting at that moment; readers arriving while all are busy wait for the next. Under
/// load, many reads share one round trip; under little, checks still run side by side (one per
/// reader connection) instead of one after the other.
final class VersionChecks: @unchecked Sendable {
    private final class Ticket {
        let id: String
        var result: Result<StoredVersion?, StoreError>?
        init(id: String) { self.id = id }
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var waiting: [Ticket] = []
    private var running = 0
    private let parallel: Int
    private let lookup: ([String]) throws(StoreError) -> [String: StoredVersion]

    init(parallel: Int = 1, lookup: @escaping ([String]) throws(StoreError) -> [String: StoredVersion]) {
        self.parallel = max(1, parallel)
        self.lookup = lookup
    }

    /// Tests: readers waiting for the next check.
    var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting.count
    }

    /// The stored row and version of session `id` (`nil`: not stored, or hidden).
    func version(of id: String) throws(StoreError) -> StoredVersion? {
        let ticket = Ticket(id: id)
        condition.lock()
        waiting.append(ticket)
        while ticket.result == nil {
            if running >= parallel || !waiting.contains(where: { $0 === ticket }) {
                condition.wait()
                continue
            }
            // Room for another check: this reader runs one for everyone waiting now.
            running += 1
            let batch = waiting
            waiting = []
            condition.unlock()
            let result: Result<[String: StoredVersion], StoreError>
            do throws(StoreError) {
                result = .success(try lookup(Array(Set(batch.map(\.id)))))
            } catch {
                result = .failure(error)
            }
            condition.lock()
            for waiter in batch { waiter.result = result.map { $0[waiter.id] } }
            running -= 1
            condition.broadcast()
        }
        condition.unlock()
        return try ticket.result!.get()
    }
}

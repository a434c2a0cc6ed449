import Foundation

/// Confirms cached sessions against shared storage for concurrent reads in one query (issue
/// 14, item 4): a reader that finds no check under way runs one for every reader waiting at
/// that moment; readers arriving meanwhile wait for the next. Under load, many reads share one
/// round trip instead of queueing one each for the reader connections.
final class VersionChecks: @unchecked Sendable {
    private final class Ticket {
        let id: String
        var result: Result<StoredVersion?, StoreError>?
        init(id: String) { self.id = id }
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var waiting: [Ticket] = []
    private var running = false
    private let lookup: ([String]) throws(StoreError) -> [String: StoredVersion]

    init(lookup: @escaping ([String]) throws(StoreError) -> [String: StoredVersion]) {
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
            if running {
                condition.wait()
                continue
            }
            // No check under way: this reader runs one for everyone waiting now.
            running = true
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
            running = false
            condition.broadcast()
        }
        condition.unlock()
        return try ticket.result!.get()
    }
}

import Foundation

/// Confirms cached sessions against shared storage for concurrent reads in one query (issue
/// 14, item 4). `parallel` threads (one per reader connection) each take every check waiting
/// when they come free and answer them with one query: under load many reads share one round
/// trip; under little, checks still run side by side instead of one after the other.
///
/// A read need not hold a thread while it waits (`version(of:then:)`): an HTTP worker that
/// blocked for each round trip capped GETs on PostgreSQL at the workers' count in flight,
/// whatever the batching, at 0.16x of SQLite's rate.
final class VersionChecks: @unchecked Sendable {
    typealias Answer = @Sendable (Result<StoredVersion?, StoreError>) -> Void

    private struct Ticket {
        let id: String
        let answer: Answer
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var waiting: [Ticket] = []
    private var stopped = false
    private var threads = 0
    private let lookup: ([String]) throws(StoreError) -> [String: StoredVersion]

    init(parallel: Int = 1, lookup: @escaping ([String]) throws(StoreError) -> [String: StoredVersion]) {
        self.lookup = lookup
        for index in 0..<max(1, parallel) {
            let thread = Thread { [self] in work() }
            thread.name = "todaysim-version-checks-\(index)"
            threads += 1
            thread.start()
        }
    }

    /// Tests: reads waiting for the next check.
    var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting.count
    }

    /// The stored row and version of session `id` (`nil`: not stored, or hidden), waited for.
    func version(of id: String) throws(StoreError) -> StoredVersion? {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<StoredVersion?, StoreError>?
        version(of: id) { result in
            outcome = result
            done.signal()
        }
        done.wait()
        return try outcome!.get()
    }

    /// The same, answered on a checking thread (once stopped: on the caller's, at once).
    func version(of id: String, then answer: @escaping Answer) {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            answer(Self.run(lookup, [id]).map { $0[id] })
            return
        }
        waiting.append(Ticket(id: id, answer: answer))
        condition.signal()
        condition.unlock()
    }

    /// Answers what waits, then lets the threads end.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while threads > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while waiting.isEmpty, !stopped { condition.wait() }
            if waiting.isEmpty { break }
            let batch = waiting
            waiting = []
            condition.unlock()
            let result = Self.run(lookup, Array(Set(batch.map(\.id))))
            for ticket in batch { ticket.answer(result.map { $0[ticket.id] }) }
            condition.lock()
        }
        threads -= 1
        condition.broadcast()
        condition.unlock()
    }

    private static func run(_ lookup: ([String]) throws(StoreError) -> [String: StoredVersion],
                            _ ids: [String]) -> Result<[String: StoredVersion], StoreError> {
        do throws(StoreError) {
            return .success(try lookup(ids))
        } catch {
            return .failure(error)
        }
    }
}

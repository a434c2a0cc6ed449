import Foundation

/// Where committed writes reach their callers: one serial queue. The writer thread hands each
/// commit's answers and change notices here and goes on to the next transaction, so it runs no
/// caller's code (the server's completions, its long polls and streams woken), and each caller
/// hears in commit order.
final class Delivery: @unchecked Sendable {
    private let queue = DispatchQueue(label: "todaysim-delivery")
    private let onQueue = DispatchSpecificKey<Bool>()

    init() {
        queue.setSpecific(key: onQueue, value: true)
    }

    /// Whether the caller runs on this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: onQueue) != nil }

    func deliver(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Returns once everything handed over before it was delivered (at once when called from a
    /// delivery: it would wait for itself).
    func flush() {
        guard !isCurrent else { return }
        queue.sync {}
    }
}

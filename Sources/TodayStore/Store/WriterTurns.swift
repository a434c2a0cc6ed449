import Foundation

/// Lets the group-commit writer in between the chunks of a long job (issue 12, item 10). The
/// write lock is not fair: a job releasing it and taking it straight back would keep an input
/// waiting for the whole job, not for one chunk.
final class WriterTurns: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var waiting = 0
    /// What the turn's bound is measured on.
    private let time: any TimeSource

    init(time: any TimeSource = SystemTime()) {
        self.time = time
    }

    /// Around the writer's `writeLock.lock()`: it is waiting from `waitingBegan` to `waitingEnded`.
    func waitingBegan() {
        condition.lock()
        waiting += 1
        condition.unlock()
    }

    func waitingEnded() {
        condition.lock()
        waiting -= 1
        if waiting == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Between two chunks, the write lock released: returns once no writer waits for it, or
    /// after `limit` seconds.
    func yield(limit: TimeInterval = 0.05) {
        let deadline = time.now.addingTimeInterval(limit)
        condition.lock()
        while waiting > 0, time.wait(condition, until: deadline) {}
        condition.unlock()
    }
}

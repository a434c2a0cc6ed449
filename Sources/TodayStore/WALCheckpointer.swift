import Foundation

/// Copies the WAL back into the database on its own thread and connection, so the fsync a
/// checkpoint needs never runs inside an input's transaction (the writer's own automatic
/// checkpoint is only a fallback, far out). A PASSIVE checkpoint never blocks the writer.
final class WALCheckpointer: @unchecked Sendable {
    /// How often the WAL is copied back.
    static let interval: TimeInterval = 0.1
    /// The writer checkpoints by itself only if the WAL ever grows past this many pages.
    static let writerFallbackPages = 20_000

    private let database: Database
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopped = false
    private var finished = false

    init(path: String, durability: Durability) throws(SQLiteError) {
        database = try Database(path: path)
        try database.execute("PRAGMA synchronous = \(durability.rawValue)")
        let thread = Thread { [self] in run() }
        thread.name = "todaysim-checkpoint"
        thread.start()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: Self.interval)) }
            if stopped {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            // A busy or failed pass is retried on the next tick; the writer's fallback bounds the WAL.
            try? database.execute("PRAGMA wal_checkpoint(PASSIVE)")
        }
    }
}

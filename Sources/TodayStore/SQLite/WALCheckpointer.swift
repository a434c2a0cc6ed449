import Foundation

/// Copies the WAL back into the database on its own thread and connection, so the fsync a
/// checkpoint needs never runs inside an input's transaction (the writer's own automatic
/// checkpoint is only a fallback, far out). A PASSIVE checkpoint never blocks the writer.
final class WALCheckpointer: @unchecked Sendable {
    /// How often the WAL is copied back.
    static let interval: TimeInterval = 0.1
    /// The writer checkpoints by itself only if the WAL ever grows past this many pages.
    static let writerFallbackPages = 20_000

    private let loop: BackgroundLoop

    /// `time`: what the interval is measured on (the storage's clock).
    init(path: String, durability: Durability, time: any TimeSource = SystemTime()) throws(SQLiteError) {
        let database = try Database(path: path)
        try database.execute("PRAGMA synchronous = \(durability.rawValue)")
        let connection = CheckpointConnection(database: database)
        loop = BackgroundLoop(name: "todaysim-checkpoint",
                              nextWake: { time.now.addingTimeInterval(Self.interval) },
                              // A busy or failed pass is retried on the next tick; the writer's
                              // fallback bounds the WAL.
                              time: time,
                              work: { try? connection.database.execute("PRAGMA wal_checkpoint(PASSIVE)") })
        loop.start()
    }

    func stop() { loop.stop() }
}

/// The checkpointer's connection, used only by its loop's thread.
private final class CheckpointConnection: @unchecked Sendable {
    let database: Database

    init(database: Database) { self.database = database }
}

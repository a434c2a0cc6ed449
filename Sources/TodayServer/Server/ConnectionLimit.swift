import Foundation
import TodayStore

/// The server's own connection limit (issue 12, item 11). At libmicrohttpd's limit it stops
/// polling the listening socket, so a client past it hangs with nothing said or logged. This
/// limit sits below libmicrohttpd's: a connection past it is still accepted, its request is
/// answered `503 too_many_connections` with `Retry-After` and the connection closed — and the
/// refusals are logged once per interval, not once each.
final class ConnectionLimit: @unchecked Sendable {
    let limit: Int
    private let noteInterval: TimeInterval
    private let note: @Sendable (String) -> Void
    /// What the note interval is measured on (`SystemTime`; a test's `ManualTime`).
    private let time: any TimeSource
    private let lock = NSLock()
    // Guarded by `lock`.
    private var admitted = 0
    private var refused: Set<OpaquePointer> = []
    private var refusedSinceNote = 0
    private var lastNote: Date?

    /// Room above the limit (libmicrohttpd's own is set there) for the connections being refused.
    static func headroom(for limit: Int) -> Int { max(16, limit / 16) }

    init(limit: Int, noteInterval: TimeInterval = 10, time: any TimeSource = SystemTime(),
         note: @escaping @Sendable (String) -> Void) {
        self.limit = limit
        self.noteInterval = noteInterval
        self.time = time
        self.note = note
    }

    /// libmicrohttpd accepted a connection: admitted while under the limit, else marked refused.
    func opened(_ connection: OpaquePointer) {
        lock.lock()
        guard admitted >= limit else {
            admitted += 1
            lock.unlock()
            return
        }
        refused.insert(connection)
        refusedSinceNote += 1
        var message: String?
        if lastNote.map({ time.hasReached($0.addingTimeInterval(noteInterval)) }) ?? true {
            message = "connection limit \(limit) reached: new connections are answered 503 too_many_connections "
                + "(\(refusedSinceNote) since the last note; --max-connections raises it)"
            lastNote = time.now
            refusedSinceNote = 0
        }
        lock.unlock()
        if let message { note(message) }
    }

    func closed(_ connection: OpaquePointer) {
        lock.lock()
        if refused.remove(connection) == nil { admitted -= 1 }
        lock.unlock()
    }

    /// Whether this connection's requests are to be refused.
    func isRefused(_ connection: OpaquePointer) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return refused.contains(connection)
    }
}

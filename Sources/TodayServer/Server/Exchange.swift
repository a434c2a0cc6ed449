import Foundation
import TodayStore

/// One request's state between libmicrohttpd's calls: retained in its connection slot from
/// the first call, released when the request completes.
final class Exchange: @unchecked Sendable {
    var body: [UInt8] = []
    /// Bytes thrown away once the body grew past the limit.
    var discarded = 0
    var tooLarge: Bool { discarded > 0 }
    var answered = false
    /// A body read as it arrives (`BodyHandling.streamed`), taken on the `SinkPool`.
    var streamed: StreamedBody?
    /// Its key among the bodies arriving (`RequestsInFlight.arrive`) until it is all in.
    var arriving: Int?
    /// Bytes of the body seen so far (a streamed body's are not kept).
    var received = 0
    /// How long the request has taken, for the log and `/metrics`.
    let startedAt = Stopwatch()
    private let lock = NSLock()
    // Guarded by `lock`: set by the work that a parked request waits for.
    private var finished: (make: @Sendable () -> HTTPResponse, route: String)?

    /// The parked request's answer. The first one set wins until it is taken: a stop that
    /// refuses a parked request (`RequestsInFlight.drain`) must not replace an answer that
    /// arrived just before, nor be replaced by one that arrives after it.
    func finish(_ make: @escaping @Sendable () -> HTTPResponse, route: String) {
        lock.lock()
        if finished == nil { finished = (make, route) }
        lock.unlock()
    }

    func takeFinished() -> (@Sendable () -> HTTPResponse, String)? {
        lock.lock()
        defer { lock.unlock() }
        guard let ready = finished else { return nil }
        finished = nil
        return (ready.make, ready.route)
    }
}

import Foundation
import TodayStore

/// Timeline requests with `waitMs` that found nothing new: their connections are parked (no
/// thread each) until the session's timeline grows, their wait runs out, or the server stops.
public final class TimelineWaiters: @unchecked Sendable {
    private struct Waiter {
        let sessionId: String
        let deadline: Date
        let wake: @Sendable () -> Void
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var waiters: [Int: Waiter] = [:]
    private var nextKey = 0
    private var closed = false
    private var loop: BackgroundLoop!

    public init() {
        loop = BackgroundLoop(name: "todaysim-waiters", nextWake: { [unowned self] in earliestDeadline() }) { [unowned self] in
            wake(where: { $0.deadline <= Date() })
        }
        loop.start()
    }

    /// Parks a waiter; `wake` runs once, when the session changes or at `deadline`.
    func park(sessionId: String, deadline: Date, wake: @escaping @Sendable () -> Void) {
        lock.lock()
        if closed {
            lock.unlock()
            wake()
            return
        }
        nextKey += 1
        waiters[nextKey] = Waiter(sessionId: sessionId, deadline: deadline, wake: wake)
        lock.unlock()
        loop.poke()
    }

    /// The store committed entries for these sessions.
    public func sessionsChanged(_ ids: [String]) {
        let changed = Set(ids)
        wake(where: { changed.contains($0.sessionId) })
    }

    /// Any session may have changed (what other servers wrote was lost): every waiter looks again.
    public func everySessionChanged() {
        wake(where: { _ in true })
    }

    /// Answers every waiter now (the server is stopping: no connection may stay parked).
    public func releaseAll() {
        wake(where: { _ in true })
    }

    /// After this, nothing waits: every parked request is answered and new ones answer at once.
    public func stop() {
        lock.lock()
        closed = true
        lock.unlock()
        releaseAll()
        loop.stop()
    }

    /// Whether the server is stopping (waits end at once).
    var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return waiters.count
    }

    private func earliestDeadline() -> Date? {
        lock.lock()
        defer { lock.unlock() }
        return waiters.values.map(\.deadline).min()
    }

    private func wake(where matches: (Waiter) -> Bool) {
        lock.lock()
        let due = waiters.filter { matches($0.value) }
        for key in due.keys { waiters.removeValue(forKey: key) }
        lock.unlock()
        for waiter in due.values { waiter.wake() }
    }
}

import Foundation
import TodayStore

/// Timeline requests with `waitMs` that found nothing new: their connections are parked (no
/// thread each) until the session's timeline grows, their wait runs out, or the server stops.
package final class TimelineWaiters: @unchecked Sendable {
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
    /// Counts changes, so a request can tell whether its session changed between its look at
    /// the timeline and its parking (`mark`, `park(since:)`): a change announced in between
    /// (another server's commit arrives at any moment) found no waiter to wake, and the request
    /// would sleep its whole `waitMs` with the entry already there.
    private var epoch: UInt64 = 0
    private var changedAt: [String: UInt64] = [:]
    /// Changes before this one are forgotten (the map is bounded): a mark older than it wakes.
    private var horizon: UInt64 = 0
    private static let remembered = 4096
    private var loop: BackgroundLoop!
    /// Waiters answered because their wait ran out (not by a change or the stop).
    private var expiredCount = 0
    /// What the waits' deadlines are read on (`SystemTime`; a test's `ManualTime`).
    package let time: any TimeSource

    package init(time: any TimeSource = SystemTime()) {
        self.time = time
        loop = BackgroundLoop(name: "todaysim-waiters", nextWake: { [unowned self] in earliestDeadline() },
                              time: time) { [unowned self] in
            wake(where: { time.hasReached($0.deadline) }, expiring: true)
        }
        loop.start()
    }

    /// Where the changes stand: take it before looking at a timeline, park with it after.
    func mark() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return epoch
    }

    /// Parks a waiter; `wake` runs once, when the session changes or at `deadline` (on `time`)
    /// — at once when it changed since `mark` was taken.
    func park(sessionId: String, since mark: UInt64, deadline: Date, wake: @escaping @Sendable () -> Void) {
        lock.lock()
        if closed || horizon > mark || changedAt[sessionId, default: 0] > mark {
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
    package func sessionsChanged(_ ids: [String]) {
        let changed = Set(ids)
        lock.lock()
        epoch += 1
        if changedAt.count + changed.count > Self.remembered {
            changedAt.removeAll()
            horizon = epoch
        }
        for id in changed { changedAt[id] = epoch }
        lock.unlock()
        wake(where: { changed.contains($0.sessionId) })
    }

    /// Any session may have changed (what other servers wrote was lost): every waiter looks again.
    package func everySessionChanged() {
        lock.lock()
        epoch += 1
        changedAt.removeAll()
        horizon = epoch
        lock.unlock()
        wake(where: { _ in true })
    }

    /// Answers every waiter now (the server is stopping: no connection may stay parked).
    package func releaseAll() {
        wake(where: { _ in true })
    }

    /// After this, nothing waits: every parked request is answered and new ones answer at once.
    package func stop() {
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

    package var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return waiters.count
    }

    /// How many waiters so far were answered by the end of their wait, not by a change of their
    /// session or the stop: tests tell "woken by the entry" from "ran out" by this, not by the
    /// time it took (which a loaded machine stretches).
    package var expired: Int {
        lock.lock()
        defer { lock.unlock() }
        return expiredCount
    }

    private func earliestDeadline() -> Date? {
        lock.lock()
        defer { lock.unlock() }
        return waiters.values.map(\.deadline).min()
    }

    /// Wakes and forgets the waiters that match; `expiring`: they are answered because their wait
    /// ran out, counted before any is answered (a client that has its answer sees the count).
    private func wake(where matches: (Waiter) -> Bool, expiring: Bool = false) {
        lock.lock()
        let due = waiters.filter { matches($0.value) }
        for key in due.keys { waiters.removeValue(forKey: key) }
        if expiring { expiredCount += due.count }
        lock.unlock()
        for waiter in due.values { waiter.wake() }
    }
}

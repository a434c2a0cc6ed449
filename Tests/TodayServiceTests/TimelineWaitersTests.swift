import Foundation
import Testing
import TodayTestSupport
@testable import TodayServer

/// A long poll looks at the timeline, finds nothing, then parks. A change announced between
/// the two (another server's commit arrives whenever PostgreSQL delivers it) found no waiter
/// to wake: the cluster test's long poll once slept its whole 10 s with the entry there.
@Suite struct TimelineWaitersTests {
    final class Woken: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func add(_ name: String) { lock.withLock { names.append(name) } }
        var all: [String] { lock.withLock { names } }
    }

    @Test func aChangeBetweenTheLookAndTheParkingWakesAtOnce() async {
        let waiters = TimelineWaiters()
        defer { waiters.stop() }
        let woken = Woken()
        let far = Date(timeIntervalSinceNow: 600)
        let mark = waiters.mark()
        waiters.sessionsChanged(["s1"])
        waiters.park(sessionId: "s1", since: mark, deadline: far) { woken.add("s1") }
        waiters.park(sessionId: "s2", since: mark, deadline: far) { woken.add("s2") }
        #expect(woken.all == ["s1"], "the changed session's waiter looks again; the other waits")
        #expect(waiters.count == 1)
        waiters.sessionsChanged(["s2"])
        #expect(woken.all == ["s1", "s2"])
    }

    @Test func lostNewsOrForgottenChangesWakeEveryLaterParking() async {
        let waiters = TimelineWaiters()
        defer { waiters.stop() }
        let woken = Woken()
        let far = Date(timeIntervalSinceNow: 600)
        let mark = waiters.mark()
        waiters.everySessionChanged()
        waiters.park(sessionId: "s1", since: mark, deadline: far) { woken.add("lost news") }
        // More sessions changed than are remembered: the oldest marks cannot be told apart.
        let second = waiters.mark()
        waiters.sessionsChanged((0...5000).map { "other-\($0)" })
        waiters.park(sessionId: "s2", since: second, deadline: far) { woken.add("forgotten") }
        let third = waiters.mark()
        waiters.park(sessionId: "s3", since: third, deadline: far) { woken.add("nothing since") }
        #expect(woken.all == ["lost news", "forgotten"])
        #expect(waiters.count == 1)
    }
}

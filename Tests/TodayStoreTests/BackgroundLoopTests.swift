import Foundation
import Testing
import TodayTestSupport
@testable import TodayStore

/// A background job whose work failed waits out a growing backoff (issue 12, item 8); once the
/// cause is gone (`StorageHealth` back to ok) `retryNow` ends that wait, so a wall timer that
/// fell due while the database was down fires then, not up to 30 s later (issue 14, item 3).
@Suite struct BackgroundLoopTests {
    final class Calls: @unchecked Sendable {
        let lock = NSLock()
        var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
        var value: Int { lock.withLock { count } }
    }

    @Test func retryNowEndsTheBackoffWait() async throws {
        let calls = Calls()
        // The first retry would wait 120 s: a second call within 30 s can only be the asked-for one.
        let loop = BackgroundLoop(name: "test-loop", nextWake: { nil }, firstRetry: 120) {
            if calls.next() == 1 { throw StoreError.storageUnavailable("down") }
        }
        loop.start()
        loop.poke()
        #expect(await eventually { calls.value == 1 }, "the first try ran and failed")
        loop.retryNow()
        #expect(await eventually(within: 30) { calls.value == 2 }, "retried at once, not after the 120 s backoff")
        loop.stop()
    }
}

import Foundation
import Testing
@testable import TodayStore

/// Issue 12, item 8: a background loop whose work keeps failing backs off and logs rarely.
@Suite struct RetryBackoffTests {
    struct DiskFull: Error, CustomStringConvertible {
        var description: String { "database or disk is full" }
    }

    @Test func eachFailureDoublesTheWaitUpToThirtySeconds() {
        var backoff = RetryBackoff()
        let start = Date(timeIntervalSince1970: 1_000_000)
        var delays: [TimeInterval] = []
        for attempt in 0..<12 {
            _ = backoff.failed(DiskFull(), at: start.addingTimeInterval(Double(attempt)))
            delays.append(backoff.delay)
        }
        #expect(delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30])
        #expect(backoff.until == start.addingTimeInterval(11 + 30))
        #expect(backoff.succeeded() == "recovered: the work succeeds again")
        #expect(backoff.delay == 0 && backoff.until == nil)
        #expect(backoff.succeeded() == nil, "nothing to say when nothing failed")
    }

    @Test func aRepeatedFailureIsReportedOncePerMinuteWithItsCount() {
        var backoff = RetryBackoff()
        let start = Date(timeIntervalSince1970: 1_000_000)
        var lines: [String] = []
        // 200 failures over 100 s.
        for step in 0..<200 {
            if let line = backoff.failed(DiskFull(), at: start.addingTimeInterval(Double(step) * 0.5)) { lines.append(line) }
        }
        #expect(lines.count == 2)
        #expect(lines.first == "database or disk is full (1 failure(s) since the last report; next try in 0.1 s, backing off up to 30 s)")
        #expect(lines.last?.hasPrefix("database or disk is full (120 failure(s) since the last report;") == true, "\(lines)")
    }
}

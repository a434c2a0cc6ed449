import Foundation

/// How a background loop retries work that fails (issue 12, item 8): a failing store (a full
/// disk, a read-only file) once made the wall-clock loop retry at once, forever — a core at
/// 99% and a quarter of a million log lines in five seconds. Each failure doubles the wait
/// before the next try, from `first` up to `maximum`; a success resets it. The failure is
/// reported at once, then at most once per `reportInterval` with how many were not.
struct RetryBackoff {
    static let first: TimeInterval = 0.1
    static let maximum: TimeInterval = 30
    static let reportInterval: TimeInterval = 60

    /// The longest wait: `maximum` for background work; a lost database connection is tried
    /// again sooner (`PostgresOutage`), since a restarted database should be noticed in seconds.
    let ceiling: TimeInterval
    private(set) var delay: TimeInterval = 0
    /// No try before this.
    private(set) var until: Date?
    private var unreported = 0
    private var lastReport: Date?

    /// The first wait (tests make it long, to tell a retry asked for from one waited for).
    let firstDelay: TimeInterval

    init(ceiling: TimeInterval = RetryBackoff.maximum, first: TimeInterval = RetryBackoff.first) {
        self.ceiling = ceiling
        firstDelay = first
    }

    /// The cause of the failures is gone (storage takes writes again): the next try need not
    /// wait; a failure after it goes on doubling.
    mutating func retryNow() { until = nil }

    /// Notes a failure at `now`; returns the line to log, if one is due.
    mutating func failed(_ error: any Error, at now: Date) -> String? {
        delay = delay == 0 ? firstDelay : min(ceiling, delay * 2)
        until = now.addingTimeInterval(delay)
        unreported += 1
        if let lastReport, now.timeIntervalSince(lastReport) < Self.reportInterval { return nil }
        let count = unreported
        unreported = 0
        lastReport = now
        let retry = String(format: "%.1f", delay)
        return "\(error) (\(count) failure(s) since the last report; next try in \(retry) s, backing off up to \(Int(ceiling)) s)"
    }

    /// Notes a success; returns the line to log when it ends a run of failures.
    mutating func succeeded() -> String? {
        guard delay > 0 else { return nil }
        self = RetryBackoff(ceiling: ceiling, first: firstDelay)
        return "recovered: the work succeeds again"
    }
}

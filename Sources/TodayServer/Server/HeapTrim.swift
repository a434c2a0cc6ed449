import CMicroHTTPD
import Foundation
import TodayStore

/// Gives the memory of closed connections back to the system (issue 12, item 11). Each
/// libmicrohttpd worker allocates from its own glibc arena, and glibc returns an arena's free
/// memory only from its top: after 2,000 event streams closed the process kept 90–120 MB
/// (`malloc_stats`: 1.3 MB in use of 111 MB held, nearly all in the two workers' arenas —
/// freed, not retained). So once `threshold` connections closed a trim runs `delay` later, off
/// the workers' threads, and again every `delay` while closes go on: one after a burst, not
/// one a close.
final class HeapTrim: @unchecked Sendable {
    private let threshold: Int
    private let delay: TimeInterval
    /// What `delay` is measured on (`SystemTime`; a test's `ManualTime`).
    private let time: any TimeSource
    private let lock = NSLock()
    // Guarded by `lock`.
    private var closedSinceTrim = 0
    private var scheduled = false

    init(threshold: Int = 128, delay: TimeInterval = 2, time: any TimeSource = SystemTime()) {
        self.threshold = threshold
        self.delay = delay
        self.time = time
    }

    func connectionClosed() {
        lock.lock()
        closedSinceTrim += 1
        let due = closedSinceTrim >= threshold && !scheduled
        if due { scheduled = true }
        lock.unlock()
        if due { schedule(seen: threshold) }
    }

    /// Trims `delay` from now; if more connections closed meanwhile (`seen` counted when it
    /// was scheduled), trims again `delay` after that, so the last trim follows the burst's end.
    private func schedule(seen: Int) {
        time.after(delay, on: .global(qos: .utility)) { [self] in
            lock.lock()
            let more = closedSinceTrim > seen
            closedSinceTrim = more ? closedSinceTrim - seen : 0
            scheduled = more
            let seenNow = closedSinceTrim
            lock.unlock()
            todaysim_trim_heap()
            if more { schedule(seen: seenNow) }
        }
    }
}

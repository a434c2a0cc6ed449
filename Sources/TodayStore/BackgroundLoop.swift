import Foundation

/// A thread that sleeps until the time `nextWake` names (or until poked), runs `work`, and
/// repeats until stopped. The wall-clock scheduler and the WAL checkpointer are two of these.
public final class BackgroundLoop: @unchecked Sendable {
    private let name: String
    private let nextWake: @Sendable () -> Date?
    private let work: @Sendable () -> Void
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var stopped = false
    private var poked = false
    private var finished = false
    private var started = false

    /// `nextWake` returning `nil` sleeps until a poke.
    public init(name: String, nextWake: @escaping @Sendable () -> Date?, work: @escaping @Sendable () -> Void) {
        self.name = name
        self.nextWake = nextWake
        self.work = work
    }

    public func start() {
        condition.lock()
        started = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Wakes the loop now: what `nextWake` says may have changed.
    public func poke() {
        condition.lock()
        poked = true
        condition.signal()
        condition.unlock()
    }

    /// Stops the loop and waits for its thread to finish.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while started, !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            let wake = nextWake()
            condition.lock()
            if !stopped, !poked {
                if let wake { _ = condition.wait(until: wake) } else { condition.wait() }
            }
            poked = false
            if stopped {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            work()
        }
    }
}

import Foundation

/// Where streamed bodies are taken (issue 33, item 3): a host trace is judged here, on threads
/// of its own at a lower priority (a `ReadPool`, nice +10), never on an HTTP worker. At most
/// as many bodies as it has threads hold a place at once, each from its first byte to its
/// answer (one judge's state each, however many uploads are open); the others wait their turn
/// in arrival order, at their head, with nothing of their body read (`serve --trace-threads`).
package final class SinkPool: @unchecked Sendable {
    /// How many bodies are taken at once: the threads.
    package let places: Int
    private let threads: ReadPool
    private let lock = NSLock()
    // Guarded by `lock`.
    private var taking = 0
    private var queue: [(ticket: Int, turn: @Sendable () -> Void)] = []
    private var lastTicket = 0

    /// Seconds a body waiting for a place may wait beyond its request deadline
    /// (`serve --trace-queue-seconds`): the wait is the server's, not the client's.
    package let waitAllowance: TimeInterval

    package init(threads: Int, waitAllowance: TimeInterval = 0, name: String = "trace-judge") {
        places = max(1, threads)
        self.waitAllowance = max(0, waitAllowance)
        self.threads = ReadPool(threads: places, name: name)
    }

    /// Bodies holding a place (being taken) and bodies waiting for one.
    package var counts: (taking: Int, waiting: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (taking, queue.count)
    }

    /// Takes a place for a body: `nil` when one was free, else the body's ticket in the queue;
    /// `turn` is then called (on the thread of the `leave` that frees a place) when it has one.
    func enter(turn: @escaping @Sendable () -> Void) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard taking >= places else {
            taking += 1
            return nil
        }
        lastTicket &+= 1
        queue.append((lastTicket, turn))
        return lastTicket
    }

    /// Takes a waiting body out of the queue; `false` when its turn came already.
    func withdraw(_ ticket: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let index = queue.firstIndex(where: { $0.ticket == ticket }) else { return false }
        queue.remove(at: index)
        return true
    }

    /// A body gives its place up: the first one waiting takes it.
    func leave() {
        lock.lock()
        guard !queue.isEmpty else {
            taking -= 1
            lock.unlock()
            return
        }
        let next = queue.removeFirst()
        lock.unlock()
        next.turn()
    }

    /// Runs `job` on one of the threads (on the caller's once stopped).
    func run(_ job: @escaping @Sendable () -> Void) {
        threads.submit(job)
    }

    /// Runs what is queued, then lets the threads end (after the HTTP daemon stopped).
    func stop() {
        threads.stop()
    }
}

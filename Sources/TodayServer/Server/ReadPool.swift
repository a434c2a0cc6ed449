import CMicroHTTPD
import Foundation

/// Where requests that may take long run (issue 12, item 10): pages of up to 1,000 entries,
/// exports, reports, lists, forks, and the decoding and answer of `/steps` batches. On libmicrohttpd's two workers, two clients exporting a
/// long session once held both, and `/healthz` waited 1.2 s behind them. Here the worker parks
/// the connection and one of these threads does the work; they run at a lower priority
/// (`nice` +10), so on a busy machine the workers, the writer and the timers come first.
final class ReadPool: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false
    private var running = 0

    init(threads: Int, name: String = "todaysim-reads") {
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in
                // Only this thread: on Linux a thread is a task with its own nice value.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(todaysim_thread_id()), 10)
                work()
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// A handler whose work runs on the pool; its answer (or its problem) is sent when done.
    /// `template`: the route's name for the log (never the path, which holds ids).
    func offWorker(_ template: String, _ handler: @escaping Router.Handler, log: RequestLog) -> Router.Handler {
        { [self] request, path in
            let detached = request.detached()
            return .later { finish in
                self.submit {
                    let response: HTTPResponse
                    do throws(APIError) {
                        response = try handler(detached.request, path)
                    } catch {
                        if error.code == "internal" { log.note("\(detached.request.method) \(template): \(error.logDetail ?? "unexpected failure")") }
                        response = error.response
                    }
                    if let deferred = response.deferred {
                        // What the deferred work makes (a batch's answer, a page) is made here
                        // too, not on the worker that sends it.
                        deferred { make in
                            self.submit {
                                let made = MadeResponse(response: make())
                                finish { made.response }
                            }
                        }
                    } else {
                        let made = MadeResponse(response: response)
                        finish { made.response }
                    }
                }
            }
        }
    }

    /// Queues `job`; once stopped, runs it on the caller's thread.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            job()
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs what is queued, then lets the threads end.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !jobs.isEmpty || running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// An answer made on another thread, handed to the worker that sends it.
struct MadeResponse: @unchecked Sendable {
    let response: HTTPResponse
}

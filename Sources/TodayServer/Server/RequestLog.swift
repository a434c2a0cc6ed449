import Foundation
import TodayStore

/// One line per request on stderr: method, route template, status, duration. It never prints
/// a path or query (which may hold a `uid`, H3), only the route's template.
package final class RequestLog: @unchecked Sendable {
    private let enabled: Bool
    private let sink: @Sendable (String) -> Void
    private let metricsLock = NSLock()
    // Guarded by `metricsLock`.
    private var metrics: Metrics?

    /// Requests are also counted here (for `/metrics`).
    package func count(into metrics: Metrics) {
        metricsLock.lock()
        self.metrics = metrics
        metricsLock.unlock()
    }

    /// Lines go to stderr.
    package convenience init(enabled: Bool) {
        self.init(enabled: enabled) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// Lines go to `sink` (tests read them).
    package init(enabled: Bool, sink: @escaping @Sendable (String) -> Void) {
        self.enabled = enabled
        self.sink = sink
    }

    func record(method: String, route: String, status: Int, startedAt: Stopwatch) {
        let micros = startedAt.elapsedNs / 1000
        metricsLock.lock()
        let metrics = self.metrics
        metricsLock.unlock()
        if let metrics {
            let routeLabel = "route=\"\(Metrics.label(route))\""
            metrics.increment("todaysim_http_requests_total", labels: "\(routeLabel),method=\"\(Metrics.label(method))\",status=\"\(status)\"")
            metrics.observe("todaysim_http_request_duration_seconds", labels: routeLabel, Double(micros) / 1e6)
        }
        guard enabled else { return }
        let fraction = micros % 1000 / 10
        sink("\(method) \(route) \(status) \(micros / 1000).\(fraction < 10 ? "0" : "")\(fraction)ms")
    }

    /// A server-side message (start-up, unexpected errors); never a request's data.
    package func note(_ message: String) {
        sink("todaysim: \(message)")
    }
}

import Foundation

/// Counters and histograms for `GET /metrics` (Prometheus text format), shared by the store
/// (commits, inputs, timers, violations) and the HTTP edge (requests).
package final class Metrics: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var counters: [String: [String: Double]] = [:]
    private var histograms: [String: [String: Histogram]] = [:]
    private let help: [String: (type: String, text: String)] = [
        "todaysim_http_requests_total": ("counter", "HTTP requests answered, by route template, method and status."),
        "todaysim_http_request_duration_seconds": ("histogram", "Time from a request's headers to its answer, by route template."),
        "todaysim_inputs_total": ("counter", "Inputs applied to sessions, by channel and outcome."),
        "todaysim_watchdogs_fired_total": ("counter", "Session timers that fired, by kind."),
        "todaysim_violations_total": ("counter", "Contract violations recorded (M1-M9), by code."),
        "todaysim_store_commit_seconds": ("histogram", "Time to write and commit one transaction of inputs."),
        "todaysim_store_commit_inputs": ("histogram", "Inputs carried by one transaction (group commit)."),
    ]

    struct Histogram {
        static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
        var buckets: [Double] = Array(repeating: 0, count: bounds.count)
        var count: Double = 0
        var sum: Double = 0

        mutating func observe(_ value: Double, bounds: [Double]) {
            for (index, bound) in bounds.enumerated() where value <= bound { buckets[index] += 1 }
            count += 1
            sum += value
        }
    }

    package init() {}

    /// `labels` already rendered, e.g. `route="/healthz",status="200"`.
    package func increment(_ name: String, labels: String = "", by amount: Double = 1) {
        lock.lock()
        counters[name, default: [:]][labels, default: 0] += amount
        lock.unlock()
    }

    package func observe(_ name: String, labels: String = "", _ value: Double) {
        lock.lock()
        histograms[name, default: [:]][labels, default: Histogram(buckets: Array(repeating: 0, count: bounds(for: name).count))]
            .observe(value, bounds: bounds(for: name))
        lock.unlock()
    }

    private func bounds(for name: String) -> [Double] {
        name == "todaysim_store_commit_inputs" ? [1, 2, 4, 8, 16, 32, 64] : Histogram.bounds
    }

    /// The text exposition, with `extra` gauges (name, help, [(labels, value)]) appended.
    package func render(gauges: [(name: String, help: String, values: [(String, Double)])] = []) -> String {
        lock.lock()
        defer { lock.unlock() }
        var text = ""
        for name in counters.keys.sorted() {
            text += header(name)
            for (labels, value) in counters[name]!.sorted(by: { $0.key < $1.key }) {
                text += "\(name)\(braced(labels)) \(format(value))\n"
            }
        }
        for name in histograms.keys.sorted() {
            text += header(name)
            let bounds = bounds(for: name)
            for (labels, histogram) in histograms[name]!.sorted(by: { $0.key < $1.key }) {
                let prefix = labels.isEmpty ? "" : labels + ","
                for (index, bound) in bounds.enumerated() {
                    text += "\(name)_bucket{\(prefix)le=\"\(format(bound))\"} \(format(histogram.buckets[index]))\n"
                }
                text += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(format(histogram.count))\n"
                text += "\(name)_sum\(braced(labels)) \(histogram.sum)\n"
                text += "\(name)_count\(braced(labels)) \(format(histogram.count))\n"
            }
        }
        for gauge in gauges {
            text += "# HELP \(gauge.name) \(gauge.help)\n# TYPE \(gauge.name) gauge\n"
            for (labels, value) in gauge.values { text += "\(gauge.name)\(braced(labels)) \(format(value))\n" }
        }
        return text
    }

    private func header(_ name: String) -> String {
        guard let info = help[name] else { return "# TYPE \(name) counter\n" }
        return "# HELP \(name) \(info.text)\n# TYPE \(name) \(info.type)\n"
    }

    private func braced(_ labels: String) -> String { labels.isEmpty ? "" : "{\(labels)}" }

    private func format(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A label value escaped for the text format.
    package static func label(_ value: String) -> String {
        // Every request names its route and method here: a value with nothing to escape (all of
        // them) is returned as it is, without three passes of Foundation's search (5% of a
        // write's CPU).
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") })
        else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}

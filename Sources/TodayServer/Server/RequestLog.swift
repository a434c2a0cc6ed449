import Foundation

/// One line per request on stderr: method, route template, status, duration. It never prints
/// a path or query (which may hold a `uid`, H3), only the route's template.
public final class RequestLog: Sendable {
    private let enabled: Bool
    private let sink: @Sendable (String) -> Void

    /// Lines go to stderr.
    public convenience init(enabled: Bool) {
        self.init(enabled: enabled) { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// Lines go to `sink` (tests read them).
    public init(enabled: Bool, sink: @escaping @Sendable (String) -> Void) {
        self.enabled = enabled
        self.sink = sink
    }

    func record(method: String, route: String, status: Int, startedAt: DispatchTime) {
        guard enabled else { return }
        let micros = (DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1000
        let fraction = micros % 1000 / 10
        sink("\(method) \(route) \(status) \(micros / 1000).\(fraction < 10 ? "0" : "")\(fraction)ms")
    }

    /// A server-side message (start-up, unexpected errors); never a request's data.
    public func note(_ message: String) {
        sink("todaysim: \(message)")
    }
}

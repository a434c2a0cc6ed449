import Foundation

/// One line per request on stderr: method, route template, status, duration. It never prints
/// a path or query (which may hold a `uid`, H3), only the route's template.
public final class RequestLog: Sendable {
    private let enabled: Bool

    public init(enabled: Bool) { self.enabled = enabled }

    func record(method: String, route: String, status: Int, startedAt: DispatchTime) {
        guard enabled else { return }
        let micros = (DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1000
        let millis = String(format: "%.2f", Double(micros) / 1000)
        FileHandle.standardError.write(Data("\(method) \(route) \(status) \(millis)ms\n".utf8))
    }

    /// A server-side message (start-up, unexpected errors); never a request's data.
    public func note(_ message: String) {
        FileHandle.standardError.write(Data("todaysim: \(message)\n".utf8))
    }
}

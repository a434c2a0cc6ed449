/// A table of routes read top to bottom: `METHOD /literal/{param}` → handler.
public struct Router: Sendable {
    public typealias Handler = @Sendable (HTTPRequest, PathParameters) throws(APIError) -> HTTPResponse

    public struct Route: Sendable {
        public var method: String
        /// The path template, also the route's name in the request log and metrics.
        public var template: String
        let segments: [Substring]
        let handler: Handler
    }

    public private(set) var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ template: String, _ handler: @escaping Handler) {
        let segments = template.split(separator: "/", omittingEmptySubsequences: true)
        routes.append(Route(method: method, template: template, segments: segments, handler: handler))
    }

    public enum Match {
        case found(Route, PathParameters)
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    /// `HEAD` finds the `GET` route of its path (RFC 9110 §9.3.2: health checkers use it);
    /// the server sends that answer's status and headers without its body.
    public func match(method: String, path: String) -> Match {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Self.bind(route.segments, to: parts) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") { return .found(route, parameters) }
            for served in route.method == "GET" ? ["GET", "HEAD"] : [route.method] where !allowed.contains(served) {
                allowed.append(served)
            }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    private static func bind(_ segments: [Substring], to parts: [Substring]) -> PathParameters? {
        guard segments.count == parts.count else { return nil }
        var parameters = PathParameters()
        for (segment, part) in zip(segments, parts) {
            if segment.first == "{", segment.last == "}" {
                parameters.values[String(segment.dropFirst().dropLast())] = String(part)
            } else if segment != part {
                return nil
            }
        }
        return parameters
    }
}

/// The values of a route's `{name}` segments.
public struct PathParameters: Sendable {
    var values: [String: String] = [:]

    public subscript(name: String) -> String { values[name] ?? "" }
}

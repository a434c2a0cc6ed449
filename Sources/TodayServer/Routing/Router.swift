import TodayHost

/// A table of routes read top to bottom: `METHOD /literal/{param}` → handler.
package struct Router: Sendable {
    package typealias Handler = @Sendable (HTTPRequest, PathParameters) throws(APIError) -> HTTPResponse

    package struct Route: Sendable {
        package var method: String
        /// The path template, also the route's name in the request log and metrics.
        package var template: String
        let segments: [Substring]
        let handler: Handler
    }

    package private(set) var routes: [Route] = []

    package init() {}

    package mutating func add(_ method: String, _ template: String, _ handler: @escaping Handler) {
        let segments = template.split(separator: "/", omittingEmptySubsequences: true)
        routes.append(Route(method: method, template: template, segments: segments, handler: handler))
    }

    package enum Match {
        case found(Route, PathParameters)
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    /// `HEAD` finds the `GET` route of its path (RFC 9110 §9.3.2: health checkers use it);
    /// the server sends that answer's status and headers without its body.
    package func match(method: String, path: String) -> Match {
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

    /// The path a caller most likely meant when `path` matches no route, with the methods it
    /// takes: the route whose literal segments are nearest (each within the did-you-mean
    /// distance of an unknown field; a missing `/v1` put back), with the caller's own values in
    /// its `{name}` segments. `nil` when none is near, or two different paths are equally near.
    package func nearest(to path: String) -> (path: String, methods: [String])? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var tries: [(parts: [Substring], cost: Int)] = [(parts, 0)]
        if parts.first != "v1" { tries.append((["v1"] + parts, 1)) }
        var found: [String: (distance: Int, methods: [String])] = [:]
        for (candidate, cost) in tries {
            for route in routes where route.segments.count == candidate.count {
                guard let distance = Self.distance(route.segments, candidate, from: cost) else { continue }
                let filled = zip(route.segments, candidate).map { segment, part in
                    segment.first == "{" && segment.last == "}" ? part : segment
                }
                let suggested = "/" + filled.joined(separator: "/")
                if let known = found[suggested], known.distance <= distance {
                    if known.distance == distance, !known.methods.contains(route.method) {
                        found[suggested]?.methods.append(route.method)
                    }
                    continue
                }
                found[suggested] = (distance, [route.method])
            }
        }
        guard let best = found.values.map(\.distance).min() else { return nil }
        let closest = found.filter { $0.value.distance == best }
        guard closest.count == 1, let (suggested, match) = closest.first else { return nil }
        return (suggested, match.methods)
    }

    /// Edits from `parts` to the route's literal segments (`{name}` takes anything), each segment
    /// within the did-you-mean rule; `nil` when one is not.
    private static func distance(_ segments: [Substring], _ parts: [Substring], from cost: Int) -> Int? {
        var total = cost
        for (segment, part) in zip(segments, parts) where segment != part && !(segment.first == "{" && segment.last == "}") {
            guard Suggestion.nearest(to: String(part), among: [String(segment)]) != nil else { return nil }
            total += Suggestion.editDistance(Array(part.lowercased().unicodeScalars), Array(segment.lowercased().unicodeScalars))
        }
        return total
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
package struct PathParameters: Sendable {
    var values: [String: String] = [:]

    package subscript(name: String) -> String { values[name] ?? "" }
}

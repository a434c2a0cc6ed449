/// One HTTP request as a handler sees it: the body is complete, headers and query parameters
/// are looked up by name.
package struct HTTPRequest {
    package var method: String
    /// The path without the query string.
    package var path: String
    package var body: [UInt8]
    /// What the request's token may see (`--token-file`); set by the service before routing.
    package var scope: Access.Scope = .everything
    let headerLookup: (String) -> String?
    let queryLookup: (String) -> String?

    package init(method: String, path: String, body: [UInt8] = [],
                header: @escaping (String) -> String? = { _ in nil },
                query: @escaping (String) -> String? = { _ in nil }) {
        self.method = method
        self.path = path
        self.body = body
        self.headerLookup = header
        self.queryLookup = query
    }

    package func header(_ name: String) -> String? { headerLookup(name) }

    package func query(_ name: String) -> String? { queryLookup(name) }

    /// The query parameters and headers any handler reads: what `detached()` copies.
    static let queryNames = ["after", "limit", "kind", "waitMs", "uid", "label", "status", "code", "format", "id", "keep", "toleranceMs",
                             "fieldValidation"]
    static let headerNames = ["If-None-Match", "If-Match", "Idempotency-Key", "Last-Event-ID", "Content-Type"]

    /// A copy that no longer reads from libmicrohttpd's connection, for work on another thread
    /// while the connection is parked. A handler reading a name not listed above is a bug
    /// (found in debug builds).
    func detached() -> Detached {
        var queries: [String: String] = [:]
        for name in Self.queryNames { queries[name] = query(name) }
        var headers: [String: String] = [:]
        for name in Self.headerNames { headers[name] = header(name) }
        var copy = HTTPRequest(method: method, path: path, body: body,
                               header: { [headers] name in
                                   assert(Self.headerNames.contains(name), "header \(name) is not copied by detached()")
                                   return headers[name]
                               },
                               query: { [queries] name in
                                   assert(Self.queryNames.contains(name), "query \(name) is not copied by detached()")
                                   return queries[name]
                               })
        copy.scope = scope
        return Detached(request: copy)
    }

    /// A detached request: safe to hand to another thread.
    struct Detached: @unchecked Sendable {
        let request: HTTPRequest
    }
}

/// One HTTP request as a handler sees it: the body is complete, headers and query parameters
/// are looked up by name.
public struct HTTPRequest {
    public var method: String
    /// The path without the query string.
    public var path: String
    public var body: [UInt8]
    /// What the request's token may see (`--token-file`); set by the service before routing.
    public var scope: Access.Scope = .everything
    let headerLookup: (String) -> String?
    let queryLookup: (String) -> String?

    public init(method: String, path: String, body: [UInt8] = [],
                header: @escaping (String) -> String? = { _ in nil },
                query: @escaping (String) -> String? = { _ in nil }) {
        self.method = method
        self.path = path
        self.body = body
        self.headerLookup = header
        self.queryLookup = query
    }

    public func header(_ name: String) -> String? { headerLookup(name) }

    public func query(_ name: String) -> String? { queryLookup(name) }
}

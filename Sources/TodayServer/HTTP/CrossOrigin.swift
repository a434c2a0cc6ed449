/// CORS for the browser bridge (issue 8): a page served from another origin may call the API
/// and follow event streams only when the server was started with `--allow-origin` naming that
/// origin (or `*`). Nothing is allowed by default.
package struct CrossOrigin: Sendable {
    private let origins: Set<String>

    /// Request headers a page may send (the ones the API reads).
    static let allowedHeaders = "Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, Last-Event-ID"
    /// Response headers a page may read.
    static let exposedHeaders = "ETag, Location, Idempotent-Replayed, WWW-Authenticate"

    package init(origins: [String]) {
        self.origins = Set(origins)
    }

    /// The allowed origin of a request, if it names one.
    func allowed(_ origin: String?) -> String? {
        guard let origin, !origins.isEmpty else { return nil }
        return origins.contains(origin) || origins.contains("*") ? origin : nil
    }

    /// Headers for an answer to a request from `origin`.
    func headers(for origin: String?) -> [(String, String)] {
        guard let origin = allowed(origin) else { return [] }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                ("Access-Control-Expose-Headers", Self.exposedHeaders)]
    }

    /// A preflight (`OPTIONS`) for a path that takes `methods`: `204` with `Allow`, and the
    /// CORS grant when the origin is allowed.
    func preflight(origin: String?, methods: [String]) -> HTTPResponse {
        var headers: [(String, String)] = [("Allow", (methods + ["OPTIONS"]).joined(separator: ", "))]
        if let origin = allowed(origin) {
            headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"),
                        ("Access-Control-Allow-Methods", methods.joined(separator: ", ")),
                        ("Access-Control-Allow-Headers", Self.allowedHeaders),
                        ("Access-Control-Max-Age", "600")]
        }
        return HTTPResponse(status: 204, headers: headers)
    }
}

extension HTTPResponse {
    /// The same answer with `extra` headers, also on an answer made later (a parked request).
    func adding(_ extra: [(String, String)]) -> HTTPResponse {
        guard !extra.isEmpty else { return self }
        var response = self
        response.headers += extra
        if let deferred {
            response.deferred = { finish in
                deferred { make in finish { make().adding(extra) } }
            }
        }
        return response
    }
}

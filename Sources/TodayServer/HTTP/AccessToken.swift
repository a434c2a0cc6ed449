/// `--token`: every endpoint but `/healthz`, `/bridge.js` and CORS preflights needs
/// `Authorization: Bearer <token>` (or, for browsers that cannot set headers on `EventSource`
/// or a page load, `?access_token=`, RFC 6750). Compared in constant time; never logged (the
/// request log names route templates only).
public struct AccessToken: Sendable {
    private let expected: [UInt8]

    public init?(_ token: String?) {
        guard let token, !token.isEmpty else { return nil }
        expected = Array(token.utf8)
    }

    static let openPaths: Set<String> = ["/healthz", "/bridge.js"]

    /// `nil` when the request may go on, else the `401` to answer.
    func refusal(for request: HTTPRequest) -> HTTPResponse? {
        if request.method == "OPTIONS" || Self.openPaths.contains(request.path) { return nil }
        var presented: String?
        if let header = request.header("Authorization") {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { presented = String(parts[1]) }
        } else {
            presented = request.query("access_token")
        }
        if let presented, matches(presented) { return nil }
        var response = APIError(code: "unauthorized", status: 401,
                                detail: presented == nil ? "this server needs a token: Authorization: Bearer <token>"
                                                         : "the token is not valid for this server").response
        response.headers.append(("WWW-Authenticate", "Bearer realm=\"todaysim\""))
        return response
    }

    /// Constant time in the length of the expected token.
    func matches(_ presented: String) -> Bool {
        let given = Array(presented.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}

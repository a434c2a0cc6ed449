/// Who may do what (issue 7, Access). With `--token` every endpoint but `/healthz`, `/readyz`,
/// `/bridge.js`, the rules (`/rules`, `/rules.md`: the product's documentation, no session
/// data, so the dashboard's rule links open without a token) and CORS preflights needs `Authorization: Bearer <token>` (or, for browsers
/// that cannot set headers on `EventSource` or a page load, `?access_token=`, RFC 6750).
/// `--token-file` adds tokens bound to a label: such a token sees and changes only the
/// sessions of its label, and every other session is `404` to it, exactly as if it did not
/// exist. Tokens are compared in constant time and never logged (the request log names route
/// templates only).
package struct Access: Sendable {
    /// What one request may see.
    package enum Scope: Sendable, Equatable {
        case everything
        /// Only the sessions whose `label` is this.
        case label(String)

        /// The label this scope confines to, if any.
        package var label: String? {
            if case let .label(label) = self { return label }
            return nil
        }

        /// Whether a session with `label` exists for this scope.
        package func sees(label sessionLabel: String?) -> Bool {
            switch self {
            case .everything: return true
            case let .label(label): return sessionLabel == label
            }
        }
    }

    private struct Grant: Sendable {
        let token: [UInt8]
        let scope: Scope
    }

    private let grants: [Grant]

    /// `nil` when neither is given: nothing is asked.
    package init?(token: String?, labelled: [(token: String, label: String)] = []) {
        var grants = labelled.map { Grant(token: Array($0.token.utf8), scope: $0.label == "*" ? .everything : .label($0.label)) }
        if let token, !token.isEmpty { grants.append(Grant(token: Array(token.utf8), scope: .everything)) }
        guard !grants.isEmpty else { return nil }
        self.grants = grants
    }

    static let openPaths: Set<String> = ["/healthz", "/readyz", "/bridge.js", "/rules", "/rules.md"]

    /// `request` with its token's scope set, or the `401` to answer; without tokens, as it is.
    static func scoped(_ request: HTTPRequest, by access: Access?) -> Result<HTTPRequest, APIError> {
        guard let access else { return .success(request) }
        var scoped = request
        switch access.scope(for: request) {
        case let .failure(refusal): return .failure(refusal)
        case let .success(scope): scoped.scope = scope
        }
        return .success(scoped)
    }

    /// The request's scope, or the `401` to answer.
    func scope(for request: HTTPRequest) -> Result<Scope, APIError> {
        // (CORS preflights never get here: TodayService answers `OPTIONS` before asking.)
        if Self.openPaths.contains(request.path) { return .success(.everything) }
        var presented: String?
        if let header = request.header("Authorization") {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { presented = String(parts[1]) }
        } else {
            presented = request.query("access_token")
        }
        if let presented, let scope = match(presented) { return .success(scope) }
        var refusal = APIError(code: "unauthorized", status: 401,
                               detail: presented == nil ? "this server needs a token: Authorization: Bearer <token>"
                                                        : "the token is not valid for this server")
        refusal.headers.append(("WWW-Authenticate", "Bearer realm=\"todaysim\""))
        return .failure(refusal)
    }

    /// Every grant is compared, each in constant time in its token's length, so the time
    /// taken says nothing about which token (or how much of one) matched.
    func match(_ presented: String) -> Scope? {
        let given = Array(presented.utf8)
        var found: Scope?
        for grant in grants where Self.equal(grant.token, given) {
            found = found ?? grant.scope
        }
        return found
    }

    static func equal(_ expected: [UInt8], _ given: [UInt8]) -> Bool {
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}

/// `--token-file`: one `TOKEN LABEL` pair per line (`*` as the label: every session);
/// blank lines and lines starting with `#` are skipped.
package enum TokenFile {
    package struct Problem: Error, CustomStringConvertible {
        package let line: Int
        package let reason: String
        package var description: String { line > 0 ? "line \(line): \(reason)" : reason }
    }

    package static func parse(_ text: String) throws(Problem) -> [(token: String, label: String)] {
        var pairs: [(token: String, label: String)] = []
        var seen: Set<String> = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            guard words.count == 2 else {
                throw Problem(line: index + 1, reason: "expected `TOKEN LABEL`, got \(words.count) word(s)")
            }
            let token = String(words[0])
            guard seen.insert(token).inserted else { throw Problem(line: index + 1, reason: "a token listed twice") }
            pairs.append((token, String(words[1])))
        }
        guard !pairs.isEmpty else { throw Problem(line: 0, reason: "no tokens in the file") }
        return pairs
    }
}

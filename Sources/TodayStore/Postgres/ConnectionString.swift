import CPostgres

/// A libpq connection string (`postgres://user:pass@host:port/db?…` or `host=… password=…`),
/// shown only with its password masked: the string is given on the command line and by
/// `TODAYSIM_DB`, and it must never reach a log line, an error or `/metrics` with the secret in it.
package struct ConnectionString: Sendable, CustomStringConvertible {
    package let value: String

    package init(_ value: String) { self.value = value }

    /// The string with every password masked as `***`. Errs towards hiding too much: a URI's
    /// user info ends at its last `@` before the path, so an unencoded `@` in a password (which
    /// libpq itself misreads) is masked whole.
    package var redacted: String {
        var text = value
        if isURI {
            if let password = uriPassword { text.replaceSubrange(password, with: "***") }
            text.replace(/([?&]password=)[^&#]*/, with: { "\($0.1)***" })
        } else {
            text.replace(/(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)/, with: { "\($0.1)***" })
        }
        return text
    }

    package var description: String { redacted }

    /// `message` with every spelling of the password this string holds masked: libpq's own
    /// messages may quote a misread part of the string back (e.g. a host name taken from a
    /// password with an unencoded `@`).
    func scrubbed(_ message: String) -> String {
        var text = message
        for secret in secrets where !secret.isEmpty {
            text = text.replacing(secret, with: "***")
        }
        return text
    }

    private var isURI: Bool {
        let lowered = value.lowercased()
        return lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://")
    }

    /// Where the password of a URI's user info (`user:password@`) is, if it has one.
    private var uriPassword: Range<String.Index>? {
        guard isURI, let schemeEnd = value.range(of: "://")?.upperBound else { return nil }
        let authorityEnd = value[schemeEnd...].firstIndex(of: "/") ?? value.endIndex
        guard let at = value[schemeEnd..<authorityEnd].lastIndex(of: "@"),
              let colon = value[schemeEnd..<at].firstIndex(of: ":") else { return nil }
        return value.index(after: colon)..<at
    }

    /// The password as libpq parses it (decoded, from any form), and as written in a URI's user
    /// info together with its `@`/`/`-separated pieces (what libpq misreads as a host or path).
    private var secrets: [String] {
        var found: [String] = []
        var error: UnsafeMutablePointer<CChar>?
        if let options = PQconninfoParse(value, &error) {
            var option = options
            while let keyword = option.pointee.keyword {
                if String(cString: keyword) == "password", let password = option.pointee.val {
                    found.append(String(cString: password))
                }
                option += 1
            }
            PQconninfoFree(options)
        }
        PQfreemem(error)
        if let range = uriPassword {
            let written = String(value[range])
            found.append(written)
            found += written.split(whereSeparator: { "@/".contains($0) }).map(String.init).filter { $0.count >= 3 }
        }
        return found.sorted { $0.count > $1.count }
    }
}

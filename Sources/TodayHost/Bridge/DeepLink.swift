/// A URL split the way a URL parser splits it: scheme and host compared case-insensitively,
/// query parameters percent-decoded in order (`+` stays `+`, as in iOS's `URLComponents`).
package struct DeepLink: Equatable, Sendable {
    package var scheme: String
    package var host: String
    package var query: [(name: String, value: String)]

    package static func == (lhs: DeepLink, rhs: DeepLink) -> Bool {
        lhs.scheme == rhs.scheme && lhs.host == rhs.host && lhs.query.map { [$0.name, $0.value] } == rhs.query.map { [$0.name, $0.value] }
    }

    package init?(_ url: String) {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        scheme = String(url[..<colon]).lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return nil }
        var rest = url[url.index(after: colon)...]
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            host = String(rest[..<authorityEnd]).lowercased()
            rest = rest[authorityEnd...]
        } else {
            host = ""
        }
        query = []
        if let queryStart = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: queryStart)...].split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let value = parts.count > 1 ? DeepLink.percentDecoded(parts[1]) : ""
                query.append((DeepLink.percentDecoded(parts[0]), value))
            }
        }
    }

    /// The first value of a repeated parameter, as `URLSearchParams.get` and `URLComponents` give.
    package func firstValue(of name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// H25: `today://chat…` is routed in-app; anything else is not.
    package var isTrustedChatLink: Bool { scheme == "today" && host == "chat" }

    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let high = hexValue(utf8[utf8.startIndex]), let low = hexValue(utf8[utf8.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

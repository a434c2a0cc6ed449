/// Chat attribution (H25): a trusted card link prefills the chat draft and remembers which
/// widget it came from, until the user sends.
package struct ChatAttribution: Codable, Equatable, Sendable {
    package private(set) var draft: String?
    /// `msg_trigger_ele_id` of the last card link, carried into the next `chat_query_submit`.
    package private(set) var pendingTriggerId: String?
    /// The link's `today_*` parameters, in link order.
    package private(set) var attribution: [Parameter] = []

    package struct Parameter: Codable, Equatable, Sendable {
        package var name: String
        package var value: String
    }

    package init() {}

    /// A trusted `today://chat…` link: a later card link overwrites both draft and id.
    mutating func linkOpened(_ link: DeepLink) {
        draft = link.firstValue(of: "text") ?? ""
        pendingTriggerId = link.firstValue(of: "msg_trigger_ele_id")
        var seen: Set<String> = []
        attribution = link.query.filter { $0.name.hasPrefix("today_") && seen.insert($0.name).inserted }
            .map { Parameter(name: $0.name, value: $0.value) }
    }

    /// The user edits the draft: the id stays.
    mutating func edit(text: String) {
        draft = text
    }

    /// The user sends: `nil` (ignored, `noDraft`) without a draft, else the analytics properties.
    mutating func send() -> [(String, JSON)]? {
        guard let draft, !draft.isEmpty else { return nil }
        var properties: [(String, JSON)] = [("text", .string(draft))]
        if let pendingTriggerId { properties.append(("msg_trigger_ele_id", .string(pendingTriggerId))) }
        properties += attribution.map { ($0.name, JSON.string($0.value)) }
        clear()
        return properties
    }

    /// H19: an account switch forgets the draft and the id.
    mutating func clear() {
        draft = nil
        pendingTriggerId = nil
        attribution = []
    }
}

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

extension ChatAttribution: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.optional(draft) { $0.string($1) }
        writer.optional(pendingTriggerId) { $0.string($1) }
        writer.array(attribution) { writer, parameter in
            writer.string(parameter.name)
            writer.string(parameter.value)
        }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        draft = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        pendingTriggerId = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        attribution = try reader.array { reader throws(StateDecodingError) in
            Parameter(name: try reader.string(), value: try reader.string())
        }
    }
}

/// One output as the comparison sees it, from the trace (`line`) or from the replay (`seq`,
/// `rule`).
struct Observed: Sendable, Equatable {
    var line: Int?
    var seq: Int?
    /// A trace output's input: the line of the last input before it (`nil`: none since the
    /// creation).
    var afterInput: Int?
    var atMs: Millis
    var kind: TraceKind
    var type: String
    var requestId: String?
    var data: JSON
    var rule: Rule?

    init(_ output: TraceOutput) {
        line = output.line
        atMs = output.atMs
        kind = output.kind
        type = output.type
        requestId = output.requestId
        data = output.data
    }

    init?(_ entry: TimelineEntry) {
        guard let kind = TraceKind(rawValue: entry.kind.rawValue) else { return nil }
        seq = entry.seq
        atMs = entry.atMs
        self.kind = kind
        type = entry.type
        requestId = entry.requestId
        data = entry.data
        rule = entry.rule
    }

    /// The id the output names, which binding maps: the request id of an emit, a navigation's
    /// URL, a header or spinner; a resolution's `callId`.
    var namedId: String? {
        switch kind {
        case .emit: return data["payload"]?["requestId"]?.stringValue ?? requestId
        case .navigation: return data["url"]?.stringValue.flatMap { TraceURL($0).requestId } ?? requestId
        case .header, .pull: return requestId
        case .resolution: return data["callId"]?.stringValue
        case .overlay, .analytics: return nil
        }
    }

    /// What is compared (docs/TRACES.md, "What is compared"), with the id it names passed
    /// through `mapId`.
    func compared(mapId: (String) -> String) -> JSON {
        switch kind {
        case .emit:
            guard case var .object(members)? = data["payload"] else { return data["payload"] ?? .null }
            for index in members.indices where members[index].0 == "requestId" {
                if let id = members[index].1.stringValue { members[index].1 = .string(mapId(id)) }
            }
            return .object(members)
        case .navigation:
            let url = TraceURL(data["url"]?.stringValue ?? "")
            return ["type": .string(type), "path": .string(url.path), "language": .string(url.language), "uid": .string(url.uid),
                    "requestId": .string(url.requestId.map(mapId))]
        case .header:
            // The request a header mirrors is its own: a header line names it (bound like any id).
            return ["type": .string(type), "requestId": .string(requestId.map(mapId))]
        case .overlay:
            return ["type": .string(type)]
        case .pull:
            return ["type": .string(type), "outcome": data["outcome"] ?? .null, "requestId": .string(requestId.map(mapId))]
        case .analytics:
            return ["event": data["event"] ?? .null, "properties": data["properties"] ?? .null]
        case .resolution:
            return ["type": .string(type), "value": data["value"] ?? .null]
        }
    }

    /// What a divergence shows of the output: an emit's payload, else its type, id and data.
    var shown: JSON {
        if kind == .emit, let payload = data["payload"] { return payload }
        return ["type": .string(type), "requestId": .string(requestId), "data": data]
    }
}

enum TraceComparison {
    /// Whether a trace output says what a replay output says, the trace's ids read through
    /// `mapId`. Analytics compare the event and the properties the rules give it (H24); other
    /// properties a real pipeline adds are not compared.
    static func equal(trace: Observed, replay: Observed, mapId: (String) -> String) -> Bool {
        guard trace.kind == replay.kind, trace.type == replay.type else { return false }
        if trace.kind == .analytics {
            guard same(trace.data["event"] ?? .null, replay.data["event"] ?? .null) else { return false }
            guard case let .object(expected)? = replay.data["properties"] else { return true }
            let actual = trace.data["properties"] ?? .null
            return expected.allSatisfy { name, value in actual[name].map { same($0, value) } ?? false }
        }
        return same(trace.compared(mapId: mapId), replay.compared(mapId: { $0 }))
    }

    /// The same, every id masked: what binding looks for.
    static func equalMasked(trace: Observed, replay: Observed) -> Bool {
        guard trace.kind != .analytics else { return equal(trace: trace, replay: replay, mapId: { $0 }) }
        return trace.type == replay.type && same(trace.compared(mapId: { _ in "*" }), replay.compared(mapId: { _ in "*" }))
    }

    /// JSON equality as values: object members in any order (the last of duplicates counts),
    /// numbers by value (`1` equals `1.0`).
    static func same(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case let (.array(x), .array(y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case let (.object(x), .object(y)):
            let left = Dictionary(x, uniquingKeysWith: { $1 }), right = Dictionary(y, uniquingKeysWith: { $1 })
            return left.count == right.count && left.allSatisfy { key, value in right[key].map { same(value, $0) } ?? false }
        default:
            if let x = a.numberValue, let y = b.numberValue { return x == y }
            return a == b
        }
    }
}

/// A document URL as compared: its path and its decoded `language`, `uid` and `requestId`
/// parameters. A real WebView records `https://host/embed/…`; todaysim records the path.
struct TraceURL: Equatable {
    var path: String
    var language: String?
    var uid: String?
    var requestId: String?

    init(_ text: String) {
        var rest = Substring(text)
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://"),
           !rest[..<colon].contains(where: { $0 == "/" || $0 == "?" })
        {
            rest = rest[rest.index(colon, offsetBy: 3)...]
            rest = rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
        }
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "")
        guard parts.count == 2 else { return }
        for pair in parts[1].split(separator: "&") {
            let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = nameValue.count == 2 ? Self.percentDecoded(nameValue[1]) : ""
            switch Self.percentDecoded(nameValue[0]) {
            case "language": language = value
            case "uid": uid = value
            case "requestId": requestId = value
            default: break
            }
        }
    }

    /// `%XX` decoded (and `+` as a space, as a form-encoded query writes it); a malformed escape
    /// stays as written.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex), high < utf8.endIndex,
               let low = utf8.index(index, offsetBy: 2, limitedBy: utf8.endIndex), low < utf8.endIndex,
               let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = utf8.index(after: low)
                continue
            }
            bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index = utf8.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

import Foundation
import TodayHost

/// A trace as lines of JSON (line 1 the header), built from a session's timeline: the golden
/// trace todaysim writes, the same trace as a real host records it, and single-edit mutants.
package struct TraceText: Sendable, CustomStringConvertible {
    package var header: JSON
    /// Line 2 onwards.
    package var entries: [JSON]

    package var lines: [String] { [header.serialized()] + entries.map { $0.serialized() } }
    package var text: String { lines.joined(separator: "\n") }
    package var description: String { lines.joined(separator: "\n") }

    package static let allKinds = TraceKind.allCases.map(\.rawValue)

    /// What `GET …/timeline?format=trace` writes: every output kind recorded, `endMs` the
    /// session's clock, every entry.
    package static func golden(_ runner: SessionRunner) -> TraceText {
        TraceText(header: ["todaysimTrace": 1, "recorded": .strings(allKinds), "endMs": .int(runner.session.nowMs)],
                  entries: runner.timeline.map(\.json))
    }

    package var recorded: [String] { header["recorded"]?.arrayValue?.compactMap(\.stringValue) ?? [] }

    package func with(toleranceMs: Int) -> TraceText {
        var copy = self
        copy.header = header.setting("toleranceMs", .int(toleranceMs))
        return copy
    }

    /// Only the kinds in `recorded` judged, and the lines of other output kinds gone (a recorder
    /// writes `emit` and `navigation` lines whatever it judges).
    package func recording(only kinds: [String]) -> TraceText {
        var copy = self
        copy.header = header.setting("recorded", .strings(kinds))
        copy.entries = entries.filter { entry in
            guard let kind = entry.kind, TraceKind(rawValue: kind) != nil else { return true }
            return kinds.contains(kind) || kind == "emit" || kind == "navigation"
        }
        return copy
    }
}

/// The same session as a real host's recorder writes it (issue 33): no `clock` lines (a host
/// records none) and no lines the recorder has no use for, every id the host minted an
/// upper-case random UUID, each output 0–80 ms late but never after the next input or the end
/// (the host's processing order kept), document URLs as a WebView reports them, and analytics
/// with the properties a real pipeline adds.
package struct HostRecording: Sendable {
    package var trace: TraceText
    /// Line numbers (1-based, as the verdict counts) of outputs recorded later than the rules'
    /// time, in order.
    package var delayedLines: [Int]

    package static let maximumDelayMs = 80

    package init(of runner: SessionRunner, rng: inout SeededRandom) {
        let session = runner.session
        var uuids: [(String, String)] = []
        for counter in 0...session.requestCounter + 1 {
            uuids.append((RequestIdFactory.requestId(sessionId: session.id, counter: counter), rng.upperCaseUUID()))
        }
        for counter in 0...session.dialogCounter + 1 {
            uuids.append((RequestIdFactory.uuidV5(name: "\(session.id)/dialog/\(counter)"), rng.upperCaseUUID()))
        }
        let kept = runner.timeline.filter { entry in
            switch entry.kind {
            case .input: return entry.data["via"]?.stringValue != "clock"
            case .bridge, .request, .watchdog, .violation, .verdict: return false
            default: return true
            }
        }
        var entries: [JSON] = []
        var delayed: [Int] = []
        var lastAt: Millis = 0
        for (index, entry) in kept.enumerated() {
            var atMs = entry.atMs
            if entry.kind != .input {
                let bound = kept[(index + 1)...].first { $0.kind == .input }?.atMs ?? session.nowMs
                atMs = max(lastAt, min(entry.atMs + Millis(rng.below(Self.maximumDelayMs + 1)), bound))
                if atMs != entry.atMs { delayed.append(index + 2) }
            }
            lastAt = atMs
            var json = entry.json.setting("atMs", .int(atMs))
            if entry.kind == .navigation, let url = entry.data["url"]?.stringValue, url.hasPrefix("/") {
                json = json.setting("data", entry.data.setting("url", .string("https://host" + url)))
            }
            if entry.kind == .analytics, case let .object(properties)? = entry.data["properties"] {
                let added: JSON = .object(properties + [("pipeline_ts", .int(1_733_000_000 + rng.below(1000))), ("device", "simulator")])
                json = json.setting("data", entry.data.setting("properties", added))
            }
            var text = json.serialized()
            for (made, uuid) in uuids where text.contains(made) { text = text.replacingOccurrences(of: made, with: uuid) }
            entries.append(try! JSON.parse(bytes: Array(text.utf8)))
        }
        trace = TraceText(header: ["todaysimTrace": 1, "recorded": .strings(TraceText.allKinds), "endMs": .int(session.nowMs),
                                   "host": "ios recorder (property test)"],
                          entries: entries)
        delayedLines = delayed
    }
}

extension JSON {
    var kind: String? { self["kind"]?.stringValue }
    var atMs: Millis? { self["atMs"]?.numberValue.map { Millis($0) } }

    var arrayValue: [JSON]? {
        if case let .array(elements) = self { return elements }
        return nil
    }

    /// The same object with `name` set (replaced in place, or appended).
    func setting(_ name: String, _ value: JSON) -> JSON {
        guard case var .object(members) = self else { return self }
        if let index = members.firstIndex(where: { $0.0 == name }) { members[index].1 = value } else { members.append((name, value)) }
        return .object(members)
    }
}

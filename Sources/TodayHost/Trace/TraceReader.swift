/// A host trace (docs/TRACES.md): what a real app's Today Page host received and did, one JSON
/// object a line. Line 1 is the header, line 2 the creation, then input and output entries in
/// time order, as a todaysim timeline writes them.

/// The output kinds a trace can judge.
package enum TraceKind: String, Sendable, CaseIterable, Hashable, Comparable {
    case emit, navigation, header, pull, overlay, analytics, resolution

    package static func < (lhs: TraceKind, rhs: TraceKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Line 1.
package struct TraceHeader: Sendable, Equatable {
    /// The kinds judged, distinct, in the order given.
    package var recorded: [TraceKind]
    package var toleranceMs: Millis
    /// When recording stopped; `nil`: the last line's time.
    package var endMs: Millis?
    package var host: String?

    package static let defaultToleranceMs: Millis = 100
    package static let largestToleranceMs: Millis = 10_000
}

/// A bad trace: `400 invalid_trace`, naming the line (and the field within it) and what is wrong.
package struct TraceProblem: Error, Equatable, Sendable {
    package var line: Int
    /// The field within the line, if one is to blame.
    package var field: String?
    package var detail: String

    /// The problem document's `field`: `line N` or `line N: field`.
    package var problemField: String { field.map { "line \(line): \($0)" } ?? "line \(line)" }
    /// The problem document's `detail`, beginning with the line.
    package var problemDetail: String { "line \(line): \(detail)" }

    package init(line: Int, field: String? = nil, _ detail: String) {
        self.line = line
        self.field = field
        self.detail = detail
    }
}

/// An input line, decoded as its endpoint decodes it.
package struct TraceInput: Sendable, Equatable {
    package var line: Int
    package var atMs: Millis
    package var input: Input
}

/// An output line of a judged kind (or of `emit`/`navigation`, which binding reads whatever is
/// judged).
package struct TraceOutput: Sendable, Equatable {
    package var line: Int
    package var atMs: Millis
    package var kind: TraceKind
    package var type: String
    package var requestId: String?
    package var data: JSON
}

package enum TraceLine: Sendable, Equatable {
    case header(TraceHeader)
    case creation(SessionConfig)
    case input(TraceInput)
    case output(TraceOutput)
    /// The end line (`{"atMs": T, "kind": "end"}`): recording stopped at `T`, the trace's last line.
    case end(Millis)
    /// Blank, a `clock` input (time comes from `atMs`), or a kind no one judges.
    case skipped
}

/// Reads a trace one line at a time, keeping only what the next line's checks need.
package struct TraceReader: Sendable {
    package private(set) var header: TraceHeader?
    package private(set) var creation: SessionConfig?
    /// Lines read so far, blank ones included: the number of the last line.
    package private(set) var lineNumber = 0
    /// The last line's `atMs`.
    package private(set) var lastAtMs: Millis = 0
    /// The number of the last line that was not blank.
    package private(set) var lastLine = 0
    /// The end line, once read: its number and its `atMs`.
    package private(set) var endLine: (line: Int, atMs: Millis)?
    private var tornDown = false
    /// Unknown fields in the inputs read so far (as under `fieldValidation` `Warn`): the first
    /// `listedWarnings`, each with its line; `warningCount` counts all.
    package private(set) var warnings: [Verdict.Warning] = []
    package private(set) var warningCount = 0

    /// The most warnings a verdict lists.
    package static let listedWarnings = 1000

    /// The most lines a trace may have.
    package static let maximumLines = 1_000_000
    /// The most characters of `host`.
    package static let maximumHostCharacters = 200

    package init() {}

    /// The next line (without its `\n`; a trailing `\r` is dropped).
    package mutating func read(_ line: some Collection<UInt8>) throws(TraceProblem) -> TraceLine {
        lineNumber += 1
        guard lineNumber <= Self.maximumLines else {
            throw TraceProblem(line: lineNumber, "a trace has at most \(Self.maximumLines) lines")
        }
        var bytes = Array(line)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return .skipped }
        let value: JSON
        do {
            value = try JSON.parse(bytes: bytes)
        } catch {
            throw TraceProblem(line: lineNumber, "not JSON: \(error)")
        }
        guard case .object = value else { throw TraceProblem(line: lineNumber, "expected a JSON object, got \(value.typeName)") }
        lastLine = lineNumber
        if let endLine {
            guard value["kind"]?.stringValue != "end" else {
                throw TraceProblem(line: lineNumber, field: "kind", "a second end line (the first is line \(endLine.line)): a trace ends once")
            }
            throw TraceProblem(line: lineNumber, "a line after the end line (line \(endLine.line)): the end line is the trace's last")
        }
        if header == nil {
            let parsed = try parseHeader(value)
            header = parsed
            return .header(parsed)
        }
        if creation == nil {
            let parsed = try parseCreation(value)
            creation = parsed
            return .creation(parsed)
        }
        return try parseEntry(value)
    }

    /// After the last line: the time the replay runs to, checked against the lines.
    package func endMs() throws(TraceProblem) -> Millis {
        guard let header else { throw TraceProblem(line: max(lineNumber, 1), "the trace is empty: line 1 must be the header") }
        guard creation != nil else {
            throw TraceProblem(line: lineNumber + 1, "the trace has no creation: line 2 must be the create input")
        }
        if let endLine { return endLine.atMs }  // equal to the header's endMs where both are given
        guard let endMs = header.endMs else { return lastAtMs }
        guard endMs >= lastAtMs else {
            throw TraceProblem(line: 1, field: "endMs", "endMs (\(endMs)) is before the last line's atMs (\(lastAtMs))")
        }
        return endMs
    }

    // MARK: The header

    private func parseHeader(_ value: JSON) throws(TraceProblem) -> TraceHeader {
        let line = lineNumber
        guard let version = value["todaysimTrace"] else {
            throw TraceProblem(line: line, field: "todaysimTrace", "the header needs todaysimTrace: 1 (is this line 1 of a trace?)")
        }
        guard version.int64Value == 1 else {
            throw TraceProblem(line: line, field: "todaysimTrace", "todaysimTrace must be 1 (this todaysim reads version 1), got \(version.serialized())")
        }
        guard case let .array(kinds)? = value["recorded"], !kinds.isEmpty else {
            throw TraceProblem(line: line, field: "recorded", "recorded must be a non-empty array of output kinds")
        }
        var recorded: [TraceKind] = []
        let names = TraceKind.allCases.map(\.rawValue).joined(separator: ", ")
        for kind in kinds {
            guard let name = kind.stringValue, let parsed = TraceKind(rawValue: name) else {
                throw TraceProblem(line: line, field: "recorded", "recorded: \(kind.serialized()) is not an output kind (\(names))")
            }
            guard !recorded.contains(parsed) else {
                throw TraceProblem(line: line, field: "recorded", "recorded: \(name) is listed twice")
            }
            recorded.append(parsed)
        }
        var header = TraceHeader(recorded: recorded, toleranceMs: TraceHeader.defaultToleranceMs)
        if let tolerance = value["toleranceMs"], !tolerance.isNull {
            header.toleranceMs = try integer(tolerance, "toleranceMs", in: 0...TraceHeader.largestToleranceMs, line: line,
                                             "an integer from 0 to \(TraceHeader.largestToleranceMs)")
        }
        if let end = value["endMs"], !end.isNull {
            let latest = clockCeilingMs - TraceHeader.largestToleranceMs
            header.endMs = try integer(end, "endMs", in: 0...latest, line: line, "an integer from 0 to \(latest)")
        }
        if let host = value["host"], !host.isNull {
            guard let text = host.stringValue, text.unicodeScalars.count <= Self.maximumHostCharacters else {
                throw TraceProblem(line: line, field: "host", "host must be a string of at most \(Self.maximumHostCharacters) characters")
            }
            header.host = text
        }
        return header
    }

    // MARK: The creation

    /// Fields of a creation body the replay ignores: it is always a virtual session of its own.
    static let ignoredCreationFields: Set<String> = ["id", "label", "ttlMs", "clock"]

    private mutating func parseCreation(_ value: JSON) throws(TraceProblem) -> SessionConfig {
        let line = lineNumber
        let notCreation = "line 2 must be the creation: an input entry of type create"
        guard value["kind"]?.stringValue == "input", value["type"]?.stringValue == "create" else {
            throw TraceProblem(line: line, notCreation)
        }
        if let via = value["data"]?["via"], via.stringValue != "create" {
            throw TraceProblem(line: line, field: "data.via", "\(notCreation) (via create), got via \(via.serialized())")
        }
        guard let atMs = value["atMs"], atMs.int64Value == 0 else {
            throw TraceProblem(line: line, field: "atMs", "the creation is at atMs 0: the clock of every later line starts there")
        }
        guard case let .object(members)? = value["data"]?["input"] else {
            throw TraceProblem(line: line, field: "data.input", "the creation needs data.input: a creation body as POST /v1/sessions takes it")
        }
        do throws(InputProblem) {
            var config = try InputDecoding.creation(BodyFields.object(.object(members.filter { !Self.ignoredCreationFields.contains($0.0) }))).config
            config.clock = .virtual
            warn(line: line, ControlBody.creation.unknownFields(in: .object(members)))
            return config
        } catch {
            throw TraceProblem(line: line, field: error.field.map { "data.input.\($0)" }, "the creation: \(error.detail)")
        }
    }

    private mutating func warn(line: Int, _ found: [FieldWarning]) {
        for warning in found {
            warningCount += 1
            if warnings.count < Self.listedWarnings {
                warnings.append(Verdict.Warning(line: line, field: "data.input." + warning.field, detail: warning.detail))
            }
        }
    }

    /// `value` as an integer within `range`, or a problem saying it must be `what`.
    private func integer(_ value: JSON, _ field: String, in range: ClosedRange<Int64>, line: Int, _ what: String) throws(TraceProblem) -> Int64 {
        guard let number = value.int64Value, range.contains(number) else {
            throw TraceProblem(line: line, field: field, "\(field) must be \(what), got \(value.serialized())")
        }
        return number
    }

    // MARK: Entries

    private mutating func parseEntry(_ value: JSON) throws(TraceProblem) -> TraceLine {
        let line = lineNumber
        guard let atValue = value["atMs"] else { throw TraceProblem(line: line, field: "atMs", "atMs is required") }
        let latest = clockCeilingMs - 2 * TraceHeader.largestToleranceMs
        let atMs = try integer(atValue, "atMs", in: 0...latest, line: line, "an integer from 0 to \(latest)")
        guard atMs >= lastAtMs else {
            throw TraceProblem(line: line, field: "atMs", "atMs goes backwards: \(atMs) after \(lastAtMs) on an earlier line")
        }
        lastAtMs = atMs
        guard let kind = value["kind"]?.stringValue else { throw TraceProblem(line: line, field: "kind", "kind must be a string") }
        if kind == "input" { return try parseInput(value, atMs: atMs) }
        if kind == "end" { return try parseEnd(atMs: atMs) }
        guard let outputKind = TraceKind(rawValue: kind) else { return .skipped }  // bridge, request, watchdog, violation, …
        guard let type = value["type"]?.stringValue else { throw TraceProblem(line: line, field: "type", "an output needs a string type") }
        let data = value["data"] ?? .object([])
        guard case .object = data else { throw TraceProblem(line: line, field: "data", "data must be an object") }
        var requestId: String?
        if let id = value["requestId"], !id.isNull {
            guard let text = id.stringValue else { throw TraceProblem(line: line, field: "requestId", "requestId must be a string or null") }
            requestId = text
        }
        return .output(TraceOutput(line: line, atMs: atMs, kind: outputKind, type: type, requestId: requestId, data: data))
    }

    /// The end line: when the recorder closed, so the replay runs to it and a timer due before
    /// it that the host never fired is `missing`.
    private mutating func parseEnd(atMs: Millis) throws(TraceProblem) -> TraceLine {
        if let stated = header?.endMs, stated != atMs {
            throw TraceProblem(line: lineNumber, field: "atMs",
                               "the end line's atMs (\(atMs)) disagrees with the header's endMs (\(stated)): give one, or the same time in both")
        }
        endLine = (lineNumber, atMs)
        return .end(atMs)
    }

    /// The verdict's warning for a trace with neither an end line nor `endMs`, listed whatever
    /// the count of other warnings: the replay stopped at the last line, and `pending` (the
    /// replay's timers then) were never judged.
    package mutating func warnNoEnd(pending: [Watchdog]) {
        let timers = pending.isEmpty ? "none was pending"
            : pending.map { "\($0.kind.rawValue)\($0.requestId.map { " for \($0)" } ?? "") at \($0.dueAtMs) ms" }.joined(separator: ", ")
        warningCount += 1
        warnings.append(Verdict.Warning(
            line: lastLine, field: "end",
            detail: "no end line: timers due after line \(lastLine) (\(timers)) were not judged; a recorder writes "
                + #"{"atMs": T, "kind": "end"} as the last line when it closes, so a spinner or header left up is missing"#))
    }

    private mutating func parseInput(_ value: JSON, atMs: Millis) throws(TraceProblem) -> TraceLine {
        let line = lineNumber
        let type = value["type"]?.stringValue
        let data = value["data"] ?? .null
        var via = data["via"]?.stringValue
        if via == nil, let type { via = Input.channel(ofType: type) }
        guard let via else { throw TraceProblem(line: line, field: "data.via", "an input needs data.via or a type to tell its channel") }
        if via == "clock" { return .skipped }
        guard !tornDown else { throw TraceProblem(line: line, "an input after the teardown: the session is closed") }
        let decode: InputDecoding.Decode
        // A bridge message's fields are Web's own (H21): not checked.
        var checked: ControlBody?
        switch via {
        case "gesture": (decode, checked) = (InputDecoding.gesture, .gesture)
        case "lifecycle": (decode, checked) = (InputDecoding.lifecycle, .lifecycle)
        case "webEvent": decode = InputDecoding.webEvent
        case "command": (decode, checked) = (InputDecoding.command, .command)
        case "teardown":
            tornDown = true
            return .input(TraceInput(line: line, atMs: atMs, input: .teardown))
        case "create": throw TraceProblem(line: line, "a second creation: a trace holds one session")
        default:
            throw TraceProblem(line: line, field: "data.via", "data.via must be gesture, lifecycle, webEvent, command or clock, got \"\(via)\"")
        }
        guard case .object = data["input"] ?? .null else {
            throw TraceProblem(line: line, field: "data.input", "an input needs data.input: the body as its endpoint takes it")
        }
        do throws(InputProblem) {
            let input = try decode(BodyFields.object(data["input"]!))
            if case .teardown = input { tornDown = true }
            if let checked { warn(line: line, checked.unknownFields(in: data["input"]!)) }
            return .input(TraceInput(line: line, atMs: atMs, input: input))
        } catch {
            throw TraceProblem(line: line, field: error.field.map { "data.input.\($0)" }, error.detail)
        }
    }
}

extension Input {
    /// The channel of an input entry that does not say (`via`), known by its type as the export
    /// reads entries written before inputs recorded it.
    package static func channel(ofType type: String) -> String {
        switch type {
        case "create": return "create"
        case "clock": return "clock"
        case "pull", "liveWidget.created", "liveWidget.cancelled", "chat.edit", "chat.send", "dialog.choose", "dialog.dismiss":
            return "gesture"
        case "background", "foreground", "tabActivated", "socketEvent", "timerTick", "navigation", "webContentTerminated",
            "accountSwitch", "teardown":
            return "lifecycle"
        case "todayPage.scrollToSection": return "command"
        default: return "webEvent"
        }
    }
}

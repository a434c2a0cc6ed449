/// Aligning two traces by their inputs and binding each one's host-minted ids to the other's.
extension HostTraceComparison {
    /// Compares two traces given whole as NDJSON text. `toleranceMs`: replaces both traces' own
    /// (their larger one), for the comparison and for each one's verdict.
    package static func compare(_ a: String, _ b: String, toleranceMs: Millis? = nil) throws(TracePairProblem) -> HostTraceComparison {
        let first: TraceRecording, second: TraceRecording
        do throws(TraceProblem) { first = try TraceRecording.read(a, toleranceMs: toleranceMs) } catch { throw .invalidTrace(.a, error) }
        do throws(TraceProblem) { second = try TraceRecording.read(b, toleranceMs: toleranceMs) } catch { throw .invalidTrace(.b, error) }
        return try compare(first, second, toleranceMs: toleranceMs)
    }

    /// Compares two traces read whole: their inputs must align (the same number, each pair of
    /// one channel and type); every output of a kind both record is paired.
    package static func compare(_ a: TraceRecording, _ b: TraceRecording, toleranceMs: Millis? = nil) throws(TracePairProblem) -> HostTraceComparison {
        var comparer = TracePairComparer(a: a, b: b, tolerance: toleranceMs ?? max(a.header.toleranceMs, b.header.toleranceMs))
        try comparer.align()
        comparer.bind()
        return comparer.pair()
    }
}

/// One comparison under way: the two traces, the binding of A's host-minted ids to B's, and
/// what was found.
struct TracePairComparer {
    let a: TraceRecording
    let b: TraceRecording
    let tolerance: Millis
    /// A's id → B's.
    var binding: [String: String] = [:]
    var boundInB: Set<String> = []
    /// A's host-minted ids nothing bound: between pairs they match any id of B (`apart`).
    var unboundInA: Set<String> = []
    /// Analytics properties not compared: the base fields (H24) whose values the two creations
    /// give differently (a device's `did`, `sid`, `client_plat`).
    var deviceProperties: Set<String> = []
    var warnings: [HostTraceComparison.Warning] = []
    var warningCount = 0

    init(a: TraceRecording, b: TraceRecording, tolerance: Millis) {
        self.a = a
        self.b = b
        self.tolerance = tolerance
    }

    // MARK: Inputs

    /// Checks that the inputs align (else the traces do not record one scenario), and warns of
    /// what may explain a difference: other creation settings, inputs further apart than the
    /// tolerance or with other content.
    mutating func align() throws(TracePairProblem) {
        noteCreations()
        for (index, (x, y)) in zip(a.inputs, b.inputs).enumerated() {
            guard Self.channel(x.input) == Self.channel(y.input), Self.type(x.input) == Self.type(y.input) else {
                throw .notComparable(field: "a: line \(x.line); b: line \(y.line)",
                                     detail: "input \(index + 1) is \(Self.describe(x)) in A (line \(x.line)) and \(Self.describe(y)) in B (line \(y.line))")
            }
            if abs(x.atMs - y.atMs) > tolerance {
                warn(x.line, y.line, "input \(index + 1) (\(Self.describe(x, at: false))) is at \(x.atMs) ms in A and \(y.atMs) ms in B, "
                    + "\(abs(x.atMs - y.atMs)) ms apart (tolerance \(tolerance) ms): outputs after it may differ for that alone")
            }
            if !TraceComparison.same(Self.content(x.input), Self.content(y.input)) {
                warn(x.line, y.line, "input \(index + 1) (\(Self.describe(x, at: false))) differs: A gave \(Self.content(x.input).serialized()), "
                    + "B \(Self.content(y.input).serialized()): outputs after it may differ for that alone")
            }
        }
        guard a.inputs.count == b.inputs.count else {
            let (longer, side, other) = a.inputs.count > b.inputs.count ? (a, "A", "B") : (b, "B", "A")
            let extra = longer.inputs[min(a.inputs.count, b.inputs.count)]
            throw .notComparable(field: "\(side.lowercased()): line \(extra.line)",
                                 detail: "A has \(a.inputs.count) input\(a.inputs.count == 1 ? "" : "s") and B \(b.inputs.count): \(side)'s input \(min(a.inputs.count, b.inputs.count) + 1) "
                                     + "(line \(extra.line), \(Self.describe(extra))) has none in \(other)")
        }
    }

    /// The settings of line 2 that shape the outputs; the platform and a device's analytics base
    /// fields may differ (that is the point of comparing), the rest is warned about.
    private mutating func noteCreations() {
        let x = a.creation, y = b.creation
        var differing: [(String, String, String)] = []
        if x.uid != y.uid { differing.append(("uid", x.uid, y.uid)) }
        if x.language != y.language { differing.append(("language", x.language, y.language)) }
        if x.route != y.route { differing.append(("route", x.route, y.route)) }
        if x.loadingGate != y.loadingGate { differing.append(("loadingGate", x.loadingGate.rawValue, y.loadingGate.rawValue)) }
        if x.effectiveCapabilities != y.effectiveCapabilities {
            differing.append(("capabilities", x.effectiveCapabilities.joined(separator: ", "), y.effectiveCapabilities.joined(separator: ", ")))
        }
        for ((name, first), (_, second)) in zip(x.timing.fields, y.timing.fields) where first != second {
            differing.append(("timing.\(name)", "\(first)", "\(second)"))
        }
        for (name, first, second) in differing {
            warn(2, 2, "the creations differ in \(name) (A: \(first); B: \(second)): outputs may differ for that alone")
        }
        let base = [("did", x.analytics.did == y.analytics.did), ("sid", x.analytics.sid == y.analytics.sid),
                    ("client_plat", x.analytics.client_plat == y.analytics.client_plat), ("ctx", x.analytics.ctx == y.analytics.ctx)]
        deviceProperties = Set(base.filter { !$0.1 }.map(\.0))
    }

    private mutating func warn(_ aLine: Int, _ bLine: Int, _ detail: String) {
        warningCount += 1
        if warnings.count < HostTraceComparison.listedDifferences {
            warnings.append(HostTraceComparison.Warning(aLine: aLine, bLine: bLine, detail: detail))
        }
    }

    static func channel(_ input: Input) -> String {
        switch input {
        case .gesture: return "gesture"
        case .lifecycle, .teardown: return "lifecycle"
        case .webEvent: return "webEvent"
        case .command: return "command"
        case .clock: return "clock"
        }
    }

    static func type(_ input: Input) -> String { input.json["type"]?.stringValue ?? "" }

    /// What two aligned inputs should agree on: the body with its ids masked (binding pairs
    /// them), a Web event's timing fields aside (Web measures its own `elapsedMs` on each device).
    static func content(_ input: Input) -> JSON {
        let masked = input.mappingRequestIds { _ in "*" }.json
        guard case .webEvent = input, case let .object(members) = masked else { return masked }
        return .object(members.filter { $0.0 != "elapsedMs" })
    }

    static func describe(_ input: TraceInput, at: Bool = true) -> String {
        "\(channel(input.input)) \(type(input.input))" + (at ? " at \(input.atMs) ms" : "")
    }

    // MARK: Ids

    /// Binds A's ids to B's in A's line order, as a trace's bind to its replay's (docs/TRACES.md,
    /// "Request ids"): an output line of A that first names an id binds it to the first unbound
    /// id-minting output of B of the same kind within the tolerance that is equal with ids masked
    /// (failing that, of the same type), what B's aligned input made first; an id an input names
    /// first binds to the id its aligned input in B names.
    mutating func bind() {
        let minted = Self.mintingOutputs(of: b)
        var known: Set<String> = []
        var nextInput = 0, nextOutput = 0
        while nextInput < a.inputs.count || nextOutput < a.outputs.count {
            if nextOutput == a.outputs.count || (nextInput < a.inputs.count && a.inputs[nextInput].line < a.outputs[nextOutput].line) {
                for (x, y) in zip(a.inputs[nextInput].input.requestIds, b.inputs[nextInput].input.requestIds)
                where (!known.contains(x) || unboundInA.contains(x)) && binding[x] == nil && !boundInB.contains(y) {
                    binding[x] = y
                    boundInB.insert(y)
                    unboundInA.remove(x)
                }
                known.formUnion(a.inputs[nextInput].input.requestIds)
                nextInput += 1
                continue
            }
            let output = Observed(a.outputs[nextOutput])
            nextOutput += 1
            guard let id = output.namedId, !known.contains(id) else { continue }
            known.insert(id)
            if let chosen = candidate(for: output, among: minted), let other = chosen.namedId {
                binding[id] = other
                boundInB.insert(other)
            } else {
                unboundInA.insert(id)
            }
        }
    }

    /// B's output that A's id-minting `output` binds to.
    private func candidate(for output: Observed, among minted: [Observed]) -> Observed? {
        var low = 0, high = minted.count
        while low < high {
            let middle = (low + high) / 2
            if minted[middle].atMs < output.atMs - tolerance { low = middle + 1 } else { high = middle }
        }
        let open = minted[low...].prefix { $0.atMs <= output.atMs + tolerance }.filter { candidate in
            candidate.kind == output.kind && !candidate.namedId.map(boundInB.contains)!
        }
        // The host's processing order first: what the aligned input (or a later timer) made.
        let input = a.inputsBefore(line: output.line!)
        let ordered = open.filter { b.inputsBefore(line: $0.line!) >= input } + open.filter { b.inputsBefore(line: $0.line!) < input }
        return ordered.first { equal(output, $0, mapId: { _ in "*" }, mapOther: { _ in "*" }) } ?? ordered.first { $0.type == output.type }
    }

    /// The output lines of `trace` that name an id no earlier line named: the ids its host minted.
    static func mintingOutputs(of trace: TraceRecording) -> [Observed] {
        var known: Set<String> = []
        var minted: [Observed] = []
        var nextInput = 0
        for line in trace.outputs {
            while nextInput < trace.inputs.count, trace.inputs[nextInput].line < line.line {
                known.formUnion(trace.inputs[nextInput].input.requestIds)
                nextInput += 1
            }
            let output = Observed(line)
            guard let id = output.namedId, !known.contains(id) else { continue }
            known.insert(id)
            minted.append(output)
        }
        return minted
    }

    /// Whether an output of A says what one of B says: compared as the verifier compares
    /// (docs/TRACES.md, "What is compared"), A's ids through `mapId`, B's through `mapOther`.
    /// Analytics compare the event and the properties both carry, a device's base fields aside:
    /// each side's pipeline may add its own.
    func equal(_ x: Observed, _ y: Observed, mapId: (String) -> String, mapOther: (String) -> String = { $0 }) -> Bool {
        guard x.kind == y.kind, x.type == y.type else { return false }
        guard x.kind == .analytics else { return TraceComparison.same(x.compared(mapId: mapId), y.compared(mapId: mapOther)) }
        guard TraceComparison.same(x.data["event"] ?? .null, y.data["event"] ?? .null) else { return false }
        guard case let .object(first)? = x.data["properties"], case let .object(second)? = y.data["properties"] else { return true }
        let other = Dictionary(second, uniquingKeysWith: { $1 })
        return first.allSatisfy { name, value in
            deviceProperties.contains(name) || other[name].map { TraceComparison.same(value, $0) } ?? true
        }
    }
}

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
    /// Every output line naming each id its host minted, per trace: what binding weighs.
    var linesOfA: [String: [Observed]] = [:]
    var linesOfB: [String: [Observed]] = [:]
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

    /// Binds A's ids to B's, in A's line order (docs/TRACES.md, "Request ids", read across two
    /// traces): an id an input names first binds to the id B's aligned input names; an id a
    /// host minted (an output names it first) binds at the first line of A naming it that finds
    /// a candidate after the same aligned input in B — an unbound id of B's host named by an
    /// output of the same kind within the tolerance, equal with ids masked, failing that of the
    /// same type — and else, at its first line, to such a candidate anywhere within the
    /// tolerance (what a later input or timer made first). The inputs align, so both hosts mint
    /// in answer to the same input: the same-input pass keeps a line B lacks (a spinner line of
    /// the first of two pulls in one millisecond) from taking the second pull's id.
    mutating func bind() {
        let candidates = Self.hostNamed(in: b)
        linesOfA = Dictionary(grouping: Self.hostNamed(in: a), by: { $0.namedId! })
        linesOfB = Dictionary(grouping: candidates, by: { $0.namedId! })
        var known: Set<String> = [], given: Set<String> = []
        var firstLines: [(id: String, line: Observed)] = []
        var nextInput = 0
        for line in a.outputs {
            while nextInput < a.inputs.count, a.inputs[nextInput].line < line.line {
                bindInputs(nextInput, known: &known, given: &given)
                nextInput += 1
            }
            let output = Observed(line)
            guard let id = output.namedId, !given.contains(id) else { continue }
            if known.insert(id).inserted { firstLines.append((id, output)) }
            if binding[id] == nil, let chosen = candidate(for: output, among: candidates, sameInput: true) { bind(id, to: chosen) }
        }
        while nextInput < a.inputs.count {
            bindInputs(nextInput, known: &known, given: &given)
            nextInput += 1
        }
        for (id, line) in firstLines where binding[id] == nil {
            if let chosen = candidate(for: line, among: candidates, sameInput: false) { bind(id, to: chosen) } else { unboundInA.insert(id) }
        }
    }

    /// The ids A's input `index` names, bound to those B's aligned input names.
    private mutating func bindInputs(_ index: Int, known: inout Set<String>, given: inout Set<String>) {
        for (x, y) in zip(a.inputs[index].input.requestIds, b.inputs[index].input.requestIds) {
            if known.insert(x).inserted { given.insert(x) }
            guard binding[x] == nil, !boundInB.contains(y) else { continue }
            binding[x] = y
            boundInB.insert(y)
        }
    }

    private mutating func bind(_ id: String, to chosen: Observed) {
        guard let other = chosen.namedId else { return }
        binding[id] = other
        boundInB.insert(other)
    }

    /// The output of B whose id A's `output` binds its id to: after the same aligned input
    /// (`sameInput`), else anywhere within the tolerance, what A's input or a later one made
    /// first; of those, the one whose id's lines best match the lines of A naming the id (a
    /// spinner's line at a pull can be a reload's a moment later too, and B may lack the line:
    /// the reload's id names a navigation as well, A's id an emit that B's id names too).
    private func candidate(for output: Observed, among named: [Observed], sameInput: Bool) -> Observed? {
        var low = 0, high = named.count
        while low < high {
            let middle = (low + high) / 2
            if named[middle].atMs < output.atMs - tolerance { low = middle + 1 } else { high = middle }
        }
        let input = a.inputsBefore(line: output.line!)
        let window = named[low...].prefix { $0.atMs <= output.atMs + tolerance }.filter { candidate in
            candidate.namedId.map { !boundInB.contains($0) } == true && (!sameInput || b.inputsBefore(line: candidate.line!) == input)
        }
        let sameKind = window.filter { $0.kind == output.kind }
        let ordered = sameKind.filter { b.inputsBefore(line: $0.line!) >= input } + sameKind.filter { b.inputsBefore(line: $0.line!) < input }
        let preferred = ordered.filter { equal(output, $0, mapId: { _ in "*" }, mapOther: { _ in "*" }) } + ordered.filter { $0.type == output.type }
        guard let id = output.namedId else { return preferred.first }
        let own = linesOfA[id] ?? []
        var best: (line: Observed, score: Int)?
        for line in preferred + window.filter({ $0.kind != output.kind }) {
            let (score, matched) = match(own, linesOfB[line.namedId!] ?? [])
            // A line of another kind is weighed only when its id shares a line with A's.
            guard line.kind == output.kind || matched > 0 else { continue }
            if best.map({ score > $0.score }) ?? true { best = (line, score) }
        }
        return best?.line
    }

    /// How well two ids' lines match: each line of one with a line of the other of the same
    /// kind, equal with ids masked, within the tolerance, counts for; each line left over
    /// against. And how many matched.
    private func match(_ first: [Observed], _ second: [Observed]) -> (score: Int, matched: Int) {
        var left = second
        var matched = 0
        for line in first {
            guard let index = left.firstIndex(where: { abs($0.atMs - line.atMs) <= tolerance && equal(line, $0, mapId: { _ in "*" }, mapOther: { _ in "*" }) }) else {
                continue
            }
            left.remove(at: index)
            matched += 1
        }
        return (2 * matched - first.count - second.count, matched)
    }

    /// The output lines of `trace` that name an id its host minted (one no input named first).
    static func hostNamed(in trace: TraceRecording) -> [Observed] {
        var given: Set<String> = [], minted: Set<String> = []
        var named: [Observed] = []
        var nextInput = 0
        for line in trace.outputs {
            while nextInput < trace.inputs.count, trace.inputs[nextInput].line < line.line {
                given.formUnion(trace.inputs[nextInput].input.requestIds.filter { !minted.contains($0) })
                nextInput += 1
            }
            let output = Observed(line)
            guard let id = output.namedId, !given.contains(id) else { continue }
            minted.insert(id)
            named.append(output)
        }
        return named
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

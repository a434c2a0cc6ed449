/// Judges a real host's trace against the rules in one streaming pass (docs/TRACES.md): the
/// trace's inputs are replayed into a virtual session as they are read, and each judged output
/// of the trace is paired with the replay's, in time order, within the tolerance. What is held
/// is the session's state and the outputs within a tolerance of the lines being read, never
/// the trace.
///
/// Feed the trace's lines in order with `feed(line:)`, then call `finish()` for the verdict. A
/// bad trace throws `TraceProblem` naming its line.
public struct HostTraceVerifier: Sendable {
    public private(set) var reader = TraceReader()
    /// The replay; `nil` until the creation line.
    public private(set) var session: HostSession?
    public private(set) var ledger = InMemoryLedger()
    /// The replay's whole timeline, when asked for (`keepingTimeline`): a kept replay is stored.
    public private(set) var timeline: [TimelineEntry] = []

    private let sessionId: String
    private let label: String?
    private let keepsTimeline: Bool
    /// Replaces the trace's own tolerance (`verify-host --tolerance-ms`, `?toleranceMs=`).
    private let toleranceOverride: Millis?
    private var tolerance: Millis = TraceHeader.defaultToleranceMs
    private var judged: Set<TraceKind> = []

    // Ids (docs/TRACES.md, "Request ids").
    /// Every id a line read so far named.
    private var knownIds: Set<String> = []
    /// Host-minted trace id → the replay's id and the time of the replay output it was bound to.
    private var binding: [String: (replayId: String, atMs: Millis)] = [:]
    private var boundReplayIds: Set<String> = []
    /// A host-minted id not bound yet → the line of the output that first named it.
    private var firstNamedBy: [String: Int] = [:]
    /// Host-minted ids nothing bound: between pairs they match any replay id (`late`, `early`).
    private var unboundIds: Set<String> = []

    // What the trace says around an output, for the rule of an unexpected one.
    private var startedIds: Set<String> = []
    private var pullIds: Set<String> = []
    /// Trace request id → the reason its `refreshRequested` gave (`""`: none).
    private var requestReasons: [String: String] = [:]
    private var clearingTimes = RecentTimes()
    private var pullGestureTimes = RecentTimes()

    // The input waiting for the outputs after it (the order of a timer near it is read from them).
    private var pendingInput: TraceInput?
    private var before: [Observed] = []
    private var after: [Observed] = []

    // Pairing.
    /// Trace outputs the replay has not passed by the tolerance yet, in line order.
    private var undecided: [Observed] = []
    private var undecidedStart = 0
    /// Replay outputs not paired yet, per kind, in timeline order.
    private var replayOutputs: [TraceKind: [Observed]] = [:]
    /// Trace outputs without a pair since the kind's last pair.
    private var traceGap: [TraceKind: [Observed]] = [:]
    private var traceCounts: [TraceKind: Int] = [:]
    private var replayCounts: [TraceKind: Int] = [:]
    private var replayAfterEnd: [TraceKind: Int] = [:]
    private var divergences: [Verdict.Divergence] = []
    private var divergenceCount = 0
    /// Known once the trace has ended.
    private var endMs: Millis?

    /// How many outputs of one kind wait for a pair before the oldest are judged anyway.
    static let gapLimit = 2000
    /// How many of the replay's unpaired outputs a leftover trace output is compared with.
    static let gapLookahead = 64
    /// How many outputs around an input are kept to read a timer's order from.
    static let evidenceLimit = 1000

    /// `sessionId`: the replay's id (its server-made request ids derive from it, H4).
    /// `toleranceMs`: replaces the trace's own (0–10,000). `label`: the replay's (a kept one's).
    /// `keepingTimeline`: the replay's entries are kept for `takeTimeline()`, and `finish()`
    /// ends them with a `verdict` entry (what a kept replay stores).
    public init(sessionId: String = "replay", keepingTimeline: Bool = false, toleranceMs: Millis? = nil, label: String? = nil) {
        self.sessionId = sessionId
        self.label = label
        self.keepsTimeline = keepingTimeline
        self.toleranceOverride = toleranceMs.map { min(max($0, 0), TraceHeader.largestToleranceMs) }
    }

    /// The outputs the pass holds now beyond the replay's own state (waiting to be paired,
    /// unpaired, or kept as evidence around an input): bounded, whatever the trace's length.
    var heldOutputs: Int {
        undecided.count - undecidedStart + replayOutputs.values.reduce(0) { $0 + $1.count }
            + traceGap.values.reduce(0) { $0 + $1.count } + before.count + after.count
    }

    /// Verifies a whole trace held in memory.
    public static func verify(_ text: String, sessionId: String = "replay") throws(TraceProblem) -> Verdict {
        var verifier = HostTraceVerifier(sessionId: sessionId)
        for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            try verifier.feed(line: line)
        }
        return try verifier.finish()
    }

    /// One line of the trace, without its `\n`.
    public mutating func feed(line: some Collection<UInt8>) throws(TraceProblem) {
        switch try reader.read(line) {
        case let .header(header):
            tolerance = toleranceOverride ?? header.toleranceMs
            judged = Set(header.recorded)
        case var .creation(config):
            if let label { config.label = label }
            do throws(InputError) {
                let (created, applied) = try HostSession.create(id: sessionId, config: config)
                session = created
                take(applied.entries)
            } catch {
                throw TraceProblem(line: reader.lineNumber, field: "data.input", "the creation: \(InputProblem(error).detail)")
            }
        case let .input(input):
            note(input)
            if let pending = pendingInput { try replay(pending) }
            before = after
            after = []
            pendingInput = input
        case let .output(output):
            let observed = Observed(output)
            note(observed)
            if pendingInput == nil { append(observed, to: &before) } else { append(observed, to: &after) }
            if judged.contains(output.kind) { traceCounts[output.kind, default: 0] += 1 }
            if judged.contains(output.kind) || output.kind == .emit || output.kind == .navigation {
                undecided.append(observed)
            }
        case .skipped:
            break
        }
    }

    /// The replay's entries kept since the last call (`keepingTimeline`), in order: a kept
    /// replay is stored as it goes, not held whole.
    public mutating func takeTimeline() -> [TimelineEntry] {
        defer { timeline = [] }
        return timeline
    }

    /// After the last line: replays to `endMs` plus the tolerance and pairs what is left.
    public mutating func finish() throws(TraceProblem) -> Verdict {
        let end = try reader.endMs()
        endMs = end
        if let pending = pendingInput {
            try replay(pending)
            pendingInput = nil
        }
        if let session, !session.isClosed, end + tolerance > session.nowMs {
            try step(.clock(.advanceTo(end + tolerance)), line: reader.lineNumber)
        }
        decide(upTo: nil)
        for kind in TraceKind.allCases where judged.contains(kind) {
            resolveGap(kind, trace: traceGap[kind] ?? [], replay: replayOutputs[kind] ?? [])
            traceGap[kind] = []
            replayOutputs[kind] = []
        }
        divergences.sort(by: Verdict.Divergence.before)
        let header = reader.header!
        let verdict = Verdict(host: header.host, toleranceMs: tolerance, endMs: end,
                              judged: header.recorded.map { kind in
                                  (kind, max(traceCounts[kind] ?? 0, (replayCounts[kind] ?? 0) - (replayAfterEnd[kind] ?? 0)))
                              },
                              divergences: Array(divergences.prefix(Verdict.listedDivergences)), divergenceCount: divergenceCount,
                              warnings: reader.warnings, warningCount: reader.warningCount, session: nil)
        if keepsTimeline, var kept = session {
            // A kept replay ends with the verdict on the trace it replays (the dashboard marks
            // each divergence on its lane from it).
            timeline.append(kept.noteVerdict(verdict))
            session = kept
        }
        return verdict
    }

    // MARK: Reading

    private mutating func note(_ input: TraceInput) {
        for id in input.input.requestIds where !knownIds.contains(id) {
            knownIds.insert(id)  // an id the input gives: the same on both sides
        }
        switch input.input {
        case let .webEvent(message) where message["type"]?.stringValue == "todayPage.refreshStarted":
            if let id = message["requestId"]?.stringValue { startedIds.insert(id) }
        case let .gesture(.pull(requestId)):
            pullGestureTimes.add(input.atMs)
            if let requestId { pullIds.insert(requestId) }
        case .lifecycle(.navigation), .lifecycle(.webContentTerminated), .lifecycle(.accountSwitch), .teardown:
            clearingTimes.add(input.atMs)
        default:
            break
        }
    }

    private mutating func note(_ output: Observed) {
        if let id = output.namedId, !knownIds.contains(id) {
            knownIds.insert(id)
            firstNamedBy[id] = output.line
        }
        switch output.kind {
        case .emit:
            let payload = output.data["payload"]
            if payload?["type"]?.stringValue == "todayPage.refreshRequested", let id = output.namedId {
                requestReasons[id] = payload?["reason"]?.stringValue ?? ""
            }
        case .pull where output.type == "refreshing":
            if let id = output.requestId { pullIds.insert(id) }
        case .navigation:
            clearingTimes.add(output.atMs)
        default:
            break
        }
    }

    private func append(_ output: Observed, to list: inout [Observed]) {
        list.append(output)
        if list.count > Self.evidenceLimit { list.removeFirst(list.count - Self.evidenceLimit) }
    }

    // MARK: Replaying

    /// Applies one input of the trace at the time the binding rules give (docs/TRACES.md):
    /// the latest of its own time, the replay's clock and every bound output it names; a timer
    /// due within the tolerance fires before or after it as the trace orders the timer's output.
    private mutating func replay(_ traced: TraceInput) throws(TraceProblem) {
        guard let current = session else { return }
        var floor = current.nowMs
        for id in traced.input.requestIds {
            if binding[id] == nil, let line = firstNamedBy[id], let output = undecided[undecidedStart...].first(where: { $0.line == line }) {
                bindLookingAhead(output)
            }
            if let bound = binding[id] { floor = max(floor, bound.atMs) }
        }
        var applyAt = max(traced.atMs, floor)
        // What each timer would output, worked out once: both loops below may ask of one timer.
        var outputs: [Int: [Observed]] = [:]
        func outputsOf(_ index: Int) -> [Observed] {
            if let known = outputs[index] { return known }
            let fresh = self.outputsOf(current.watchdogs[index])
            outputs[index] = fresh
            return fresh
        }
        for (index, timer) in current.watchdogs.enumerated() where timer.dueAtMs > applyAt {
            guard timer.dueAtMs <= traced.atMs + tolerance, traceShows(outputsOf(index), in: before) else { break }
            applyAt = timer.dueAtMs
        }
        for (index, timer) in current.watchdogs.enumerated() where timer.dueAtMs <= applyAt {
            guard timer.dueAtMs > floor, timer.dueAtMs + tolerance >= traced.atMs else { continue }
            let outputs = outputsOf(index)
            if traceShows(outputs, in: after), !traceShows(outputs, in: before) {
                applyAt = max(floor, timer.dueAtMs - 1)
                break
            }
        }
        if applyAt > current.nowMs { try step(.clock(.advanceTo(applyAt)), line: traced.line) }
        try step(traced.input.mappingRequestIds { binding[$0]?.replayId ?? $0 }, line: traced.line)
        decide(upTo: session!.nowMs)
    }

    private mutating func step(_ input: Input, line: Int) throws(TraceProblem) {
        guard var current = session else { return }
        do throws(InputError) {
            let applied = try current.apply(input, ledger: ledger)
            session = current
            ledger.apply(applied.ledgerWrites)
            take(applied.entries)
        } catch {
            let problem = InputProblem(error)
            throw TraceProblem(line: line, field: problem.field.map { "data.input.\($0)" }, "the replay refused the input: \(problem.detail)")
        }
    }

    private mutating func take(_ entries: [TimelineEntry]) {
        if keepsTimeline { timeline += entries }
        for entry in entries {
            guard let output = Observed(entry), judged.contains(output.kind) || output.kind == .emit || output.kind == .navigation else {
                continue
            }
            replayOutputs[output.kind, default: []].append(output)
            if judged.contains(output.kind) { replayCounts[output.kind, default: 0] += 1 }
        }
    }

    /// What firing the timers up to and including `timer` would output at its due time, on a
    /// copy of the replay.
    private func outputsOf(_ timer: Watchdog) -> [Observed] {
        guard var copy = session else { return [] }
        guard let applied = try? copy.apply(.clock(.advanceTo(timer.dueAtMs)), ledger: ledger) else { return [] }
        return applied.entries.compactMap(Observed.init).filter { $0.atMs == timer.dueAtMs }
    }

    /// Whether one of `outputs` is in `trace` (ids masked), within the tolerance of its time.
    private func traceShows(_ outputs: [Observed], in trace: [Observed]) -> Bool {
        outputs.contains { output in
            trace.contains { abs($0.atMs - output.atMs) <= tolerance && TraceComparison.equalMasked(trace: $0, replay: output) }
        }
    }

    // MARK: Binding

    /// Binds the id `output` names for the first time, looking ahead on a copy of the replay by
    /// firing timers only, up to the output's time plus the tolerance.
    private mutating func bindLookingAhead(_ output: Observed) {
        var candidates = replayOutputs[output.kind] ?? []
        if var copy = session, output.atMs + tolerance > copy.nowMs,
           let applied = try? copy.apply(.clock(.advanceTo(output.atMs + tolerance)), ledger: ledger)
        {
            candidates += applied.entries.compactMap(Observed.init).filter { $0.kind == output.kind }
        }
        bind(output, among: candidates)
    }

    /// The first unbound replay output of the same kind within the tolerance that equals
    /// `output` with ids masked, failing that of the same type; none: the id stays unbound.
    private mutating func bind(_ output: Observed, among candidates: [Observed]) {
        guard let id = output.namedId, binding[id] == nil, firstNamedBy[id] == output.line else { return }
        firstNamedBy[id] = nil
        let open = candidates.filter { candidate in
            guard let replayId = candidate.namedId else { return false }
            return !boundReplayIds.contains(replayId) && abs(candidate.atMs - output.atMs) <= tolerance
        }
        guard let chosen = open.first(where: { TraceComparison.equalMasked(trace: output, replay: $0) })
            ?? open.first(where: { $0.type == output.type }),
            let replayId = chosen.namedId
        else {
            unboundIds.insert(id)
            return
        }
        binding[id] = (replayId, chosen.atMs)
        boundReplayIds.insert(replayId)
    }

    // MARK: Pairing

    /// Decides every trace output the replay has passed by more than the tolerance (`nil`: all).
    private mutating func decide(upTo frontier: Millis?) {
        while undecidedStart < undecided.count {
            let output = undecided[undecidedStart]
            if let frontier, output.atMs + tolerance >= frontier { break }
            undecidedStart += 1
            decide(output)
        }
        if undecidedStart > 1024, undecidedStart * 2 > undecided.count {
            undecided.removeFirst(undecidedStart)
            undecidedStart = 0
        }
        prune()
    }

    private mutating func decide(_ output: Observed) {
        let kind = output.kind
        bind(output, among: replayOutputs[kind] ?? [])
        guard judged.contains(kind) else { return }
        let queue = replayOutputs[kind] ?? []
        if let index = pairIndex(of: output, in: queue) {
            resolveGap(kind, trace: traceGap[kind] ?? [], replay: Array(queue[..<index]))
            traceGap[kind] = []
            replayOutputs[kind] = Array(queue[(index + 1)...])
            return
        }
        traceGap[kind, default: []].append(output)
        if traceGap[kind]!.count > Self.gapLimit || queue.count > Self.gapLimit {
            // Nothing pairs for a long stretch: the oldest half is judged now, to bound memory.
            let traceHalf = traceGap[kind]!.count / 2, replayHalf = queue.count / 2
            resolveGap(kind, trace: Array(traceGap[kind]!.prefix(traceHalf)), replay: Array(queue.prefix(replayHalf)))
            traceGap[kind]!.removeFirst(traceHalf)
            replayOutputs[kind]!.removeFirst(replayHalf)
        }
    }

    /// The first replay output in `queue` (in time order) within the tolerance of `output` that
    /// equals it: found by halving to the window, then looking in it only.
    private func pairIndex(of output: Observed, in queue: [Observed]) -> Int? {
        let earliest = output.atMs - tolerance, latest = output.atMs + tolerance
        var low = 0, high = queue.count
        while low < high {
            let middle = (low + high) / 2
            if queue[middle].atMs < earliest { low = middle + 1 } else { high = middle }
        }
        while low < queue.count, queue[low].atMs <= latest {
            if equal(output, queue[low]) { return low }
            low += 1
        }
        return nil
    }

    /// Replay outputs of kinds kept only for binding are dropped once no trace output can bind
    /// to them; a judged kind's unpaired replay outputs past `gapLimit` that no trace output can
    /// pair with any more (a trace that records the kind and has none of them) are judged, the
    /// oldest half at a time, so memory stays bounded.
    private mutating func prune() {
        let oldest = undecidedStart < undecided.count ? undecided[undecidedStart].atMs : reader.lastAtMs
        for kind in [TraceKind.emit, .navigation] where !judged.contains(kind) {
            replayOutputs[kind]?.removeAll { $0.atMs + tolerance < oldest }
        }
        for kind in judged {
            guard let queue = replayOutputs[kind], queue.count > Self.gapLimit else { continue }
            let passed = queue.prefix(queue.count / 2).prefix(while: { $0.atMs + tolerance < oldest }).count
            guard passed > 0 else { continue }
            // With them, the unpaired trace outputs of their time (no later: those may pair with
            // the replay outputs still held).
            let gap = traceGap[kind] ?? [], last = queue[passed - 1].atMs
            let tracePassed = gap.prefix(while: { $0.atMs <= last + tolerance && $0.atMs + tolerance < oldest }).count
            resolveGap(kind, trace: Array(gap.prefix(tracePassed)), replay: Array(queue.prefix(passed)))
            traceGap[kind]?.removeFirst(tracePassed)
            replayOutputs[kind]!.removeFirst(passed)
        }
    }

    private func equal(_ trace: Observed, _ replay: Observed) -> Bool {
        TraceComparison.equal(trace: trace, replay: replay, mapId: { binding[$0]?.replayId ?? $0 })
    }

    /// Between two pairs: leftovers pair in order as `late`/`early` (equal content) or
    /// `different` (same type, within the tolerance); the rest are `missing` or `unexpected`.
    private mutating func resolveGap(_ kind: TraceKind, trace: [Observed], replay: [Observed]) {
        var next = 0
        for output in trace {
            // In order: a pair is looked for among the next few only, so a long stretch
            // without pairs costs a bounded time per output.
            let rest = replay[next..<min(replay.count, next + Self.gapLookahead)]
            let loose = output.namedId.map(unboundIds.contains) ?? false
            if let index = rest.firstIndex(where: { equal(output, $0) || (loose && TraceComparison.equalMasked(trace: output, replay: $0)) }) {
                for skipped in replay[next..<index] { missing(skipped) }
                let expected = replay[index]
                let delta = output.atMs - expected.atMs
                record(Verdict.Divergence(
                    line: output.line, atMs: output.atMs, kind: kind, type: output.type, problem: delta > 0 ? .late : .early,
                    rule: expected.rule ?? Self.defaultRule(kind), expected: expected.shown, actual: output.shown, deltaMs: delta,
                    detail: "\((expected.rule ?? Self.defaultRule(kind)).rawValue): the host recorded \(Self.describe(output)) at \(output.atMs) ms, "
                        + "\(abs(delta)) ms \(delta > 0 ? "after" : "before") the rules' \(expected.atMs) ms (tolerance \(tolerance) ms)",
                    replaySeq: expected.seq))
                next = index + 1
            } else if let index = rest.firstIndex(where: { $0.type == output.type && abs($0.atMs - output.atMs) <= tolerance }) {
                for skipped in replay[next..<index] { missing(skipped) }
                let expected = replay[index]
                let rule = expected.rule ?? Self.defaultRule(kind)
                record(Verdict.Divergence(
                    line: output.line, atMs: output.atMs, kind: kind, type: output.type, problem: .different, rule: rule,
                    expected: expected.shown, actual: output.shown, deltaMs: nil,
                    detail: "\(rule.rawValue): at \(output.atMs) ms the host recorded \(Self.describe(output)) where the rules make \(Self.describe(expected))",
                    replaySeq: expected.seq))
                next = index + 1
            } else {
                let rule = unexpectedRule(output)
                record(Verdict.Divergence(
                    line: output.line, atMs: output.atMs, kind: kind, type: output.type, problem: .unexpected, rule: rule,
                    expected: nil, actual: output.shown, deltaMs: nil,
                    detail: "\(rule.rawValue): the host recorded \(Self.describe(output)) at \(output.atMs) ms (line \(output.line ?? 0)); the rules make none there"))
            }
        }
        for skipped in replay[next...] { missing(skipped) }
    }

    /// A replay output nothing paired: `missing`, unless it comes after the recording stopped.
    private mutating func missing(_ expected: Observed) {
        if let stop = endMs ?? reader.header?.endMs, expected.atMs > stop {
            replayAfterEnd[expected.kind, default: 0] += 1
            return
        }
        let rule = expected.rule ?? Self.defaultRule(expected.kind)
        record(Verdict.Divergence(
            line: nil, atMs: expected.atMs, kind: expected.kind, type: expected.type, problem: .missing, rule: rule,
            expected: expected.shown, actual: nil, deltaMs: nil,
            detail: "\(rule.rawValue): the rules make \(Self.describe(expected)) at \(expected.atMs) ms; the host recorded none",
            replaySeq: expected.seq))
    }

    private mutating func record(_ divergence: Verdict.Divergence) {
        divergenceCount += 1
        // Kept in verdict order, at most the listed number (outputs are judged nearly in order).
        if divergences.count >= Verdict.listedDivergences {
            guard Verdict.Divergence.before(divergence, divergences[divergences.count - 1]) else { return }
            divergences.removeLast()
        }
        let index = divergences.lastIndex { !Verdict.Divergence.before(divergence, $0) }.map { $0 + 1 } ?? 0
        divergences.insert(divergence, at: index)
    }

    // MARK: Rules of unexpected outputs (docs/TRACES.md, the rule table)

    private func unexpectedRule(_ output: Observed) -> Rule {
        switch output.kind {
        case .navigation: return LoadCause(rawValue: output.type)?.rule ?? .h3
        case .overlay: return output.type == "hidden" ? .h23 : .h3
        case .emit:
            let payload = output.data["payload"]
            switch payload?["type"]?.stringValue ?? output.type {
            case "todayPage.refreshRequested":
                return RefreshReason(rawValue: payload?["reason"]?.stringValue ?? "").requestRule
            case "webView.visibilityWillChange", "webView.visibilityChanged": return .h15
            case "todayPage.scrollToSection": return .h28
            default: return .h4
            }
        case .header:
            switch output.type {
            case "refreshing":
                // A header no refreshStarted asked for: whose request it mirrors tells the rule.
                guard let id = output.requestId, !startedIds.contains(id) else { return .h12 }
                if pullIds.contains(id) || requestReasons[id] == "user_pull" { return .h10 }
                if let reason = requestReasons[id], reason == "tab_activated" || reason == "" { return .h16 }
                return .h12
            case "updated", "failed": return .h13
            default: return clearingTimes.contains(output.atMs) ? .h14 : .h13
            }
        case .pull: return output.type == "refreshing" && pullGestureTimes.contains(output.atMs) ? .h10 : .h11
        case .analytics: return .h24
        case .resolution: return .h27
        }
    }

    static func defaultRule(_ kind: TraceKind) -> Rule {
        switch kind {
        case .emit: return .h4
        case .navigation: return .h3
        case .header: return .h12
        case .pull: return .h11
        case .overlay: return .h23
        case .analytics: return .h24
        case .resolution: return .h27
        }
    }

    static func describe(_ output: Observed) -> String {
        switch output.kind {
        case .emit:
            let payload = output.data["payload"]
            let type = payload?["type"]?.stringValue ?? output.type
            if let reason = payload?["reason"]?.stringValue { return "\(type) (\(reason))" }
            return type
        case .navigation: return "a navigation (\(output.type))"
        case .pull:
            if let outcome = output.data["outcome"]?.stringValue { return "pull \(output.type) (\(outcome))" }
            return "pull \(output.type)"
        case .analytics: return "analytics \(output.data["event"]?.stringValue ?? output.type)"
        case .header, .overlay, .resolution: return "\(output.kind.rawValue) \(output.type)"
        }
    }
}

/// The last few times something happened, to ask whether it happened at a given time.
struct RecentTimes: Sendable {
    private var times: [Millis] = []
    mutating func add(_ time: Millis) {
        times.append(time)
        if times.count > 64 { times.removeFirst() }
    }
    func contains(_ time: Millis) -> Bool { times.contains(time) }
}

extension Input {
    /// The request ids the input names: a caller's, or the one a Web event carries.
    var requestIds: [String] {
        switch self {
        case let .gesture(.pull(id)), let .gesture(.liveWidgetCreated(id)), let .lifecycle(.foreground(id)),
             let .lifecycle(.tabActivated(id)), let .lifecycle(.socketEvent(id)), let .lifecycle(.timerTick(id)),
             let .lifecycle(.webContentTerminated(id)):
            return id.map { [$0] } ?? []
        case let .webEvent(message):
            return message["requestId"]?.stringValue.map { [$0] } ?? []
        default:
            return []
        }
    }

    /// The same input with every request id it names passed through `map`.
    func mappingRequestIds(_ map: (String) -> String) -> Input {
        switch self {
        case let .gesture(.pull(id)): return .gesture(.pull(requestId: id.map(map)))
        case let .gesture(.liveWidgetCreated(id)): return .gesture(.liveWidgetCreated(requestId: id.map(map)))
        case let .lifecycle(.foreground(id)): return .lifecycle(.foreground(requestId: id.map(map)))
        case let .lifecycle(.tabActivated(id)): return .lifecycle(.tabActivated(requestId: id.map(map)))
        case let .lifecycle(.socketEvent(id)): return .lifecycle(.socketEvent(requestId: id.map(map)))
        case let .lifecycle(.timerTick(id)): return .lifecycle(.timerTick(requestId: id.map(map)))
        case let .lifecycle(.webContentTerminated(id)): return .lifecycle(.webContentTerminated(requestId: id.map(map)))
        case let .webEvent(.object(members)):
            return .webEvent(.object(members.map { name, value in
                guard name == "requestId", let id = value.stringValue else { return (name, value) }
                return (name, .string(map(id)))
            }))
        default:
            return self
        }
    }
}

/// Judges a real host's trace against the rules in one streaming pass (docs/TRACES.md): the
/// trace's inputs are replayed into a virtual session as they are read, and each judged output
/// of the trace is paired with the replay's, in time order, within the tolerance. What is held
/// is the session's state and the outputs within a tolerance of the lines being read, never
/// the trace.
///
/// Feed the trace's lines in order with `feed(line:)`, then call `finish()` for the verdict. A
/// bad trace throws `TraceProblem` naming its line.
package struct HostTraceVerifier: Sendable {
    package internal(set) var reader = TraceReader()
    /// The replay; `nil` until the creation line.
    package internal(set) var session: HostSession?
    package internal(set) var ledger = InMemoryLedger()
    /// The replay's whole timeline, when asked for (`keepingTimeline`): a kept replay is stored.
    package internal(set) var timeline: [TimelineEntry] = []

    let sessionId: String
    let label: String?
    let keepsTimeline: Bool
    /// Replaces the trace's own tolerance (`verify-host --tolerance-ms`, `?toleranceMs=`).
    let toleranceOverride: Millis?
    var tolerance: Millis = TraceHeader.defaultToleranceMs
    var judged: Set<TraceKind> = []

    // Ids (docs/TRACES.md, "Request ids").
    /// Every id a line read so far named.
    var knownIds: Set<String> = []
    /// The ids inputs gave first (a caller's, Web's own): the same on both sides.
    var givenIds: Set<String> = []
    /// Ids a Web event named before any output line did, and that the replay has not taken as
    /// its own yet: given once the replay takes one (Web made it up: a `refreshStarted`'s, an
    /// answer's to no request), else host-minted when an output line names it (a render fact
    /// naming the id a later request of todaysim's own gets: its ids are deterministic).
    var webNamedIds: Set<String> = []
    /// Host-minted trace id → the replay's id and the time of the replay output it was bound to.
    var binding: [String: (replayId: String, atMs: Millis)] = [:]
    var boundReplayIds: Set<String> = []
    /// The other way: a bound replay id → the trace's id, so a divergence's `expected` names the
    /// output in the trace's ids, as its `actual` does.
    var traceIdOf: [String: String] = [:]
    /// Output lines that first named an id, not bound yet, in line order (from `pendingStart`).
    var pending: [Observed] = []
    var pendingStart = 0
    /// The first emit or navigation line naming an id not bound yet: what made the host's request
    /// (a `refreshRequested`, a reload), which the replay output it binds to must agree with.
    var requestLines: [String: Observed] = [:]
    /// Replay outputs naming an id that a line may still bind to, in timeline order.
    var bindable: [Observed] = []
    /// Bindings made on a look-ahead, settled once the replay reaches their time.
    var provisionals: [Provisional] = []
    var lookaheadCache: (step: Int, horizon: Millis, outputs: [Observed])?
    /// An input's line → the `seq` of the first entry its replay made: the outputs a line after
    /// the input can be (the host's processing order), kept while a line waiting may ask.
    var inputSeqs: [Int: Int] = [:]
    /// Host-minted ids nothing bound: between pairs they match any replay id (`late`, `early`).
    var unboundIds: Set<String> = []

    // What the trace says around an output, for the rule of an unexpected one.
    var startedIds: Set<String> = []
    var pullIds: Set<String> = []
    /// Trace request id → the reason its `refreshRequested` gave (`""`: none).
    var requestReasons: [String: String] = [:]
    var clearingTimes = RecentTimes()
    /// The replay's last judged outputs, paired or not: the cause of an unexpected line's twin.
    var recentReplay: [Observed] = []
    var pullGestureTimes = RecentTimes()

    // The input waiting for the outputs after it (the order of a timer near it is read from them).
    var pendingInput: TraceInput?
    var before: [Observed] = []
    var after: [Observed] = []
    /// What the replay's last input made (the trace's outputs before the next input that these
    /// do not explain are a timer's).
    var lastInputOutputs: [Observed] = []

    // Pairing.
    /// Trace outputs the replay has not passed by the tolerance yet, in line order.
    var undecided: [Observed] = []
    var undecidedStart = 0
    /// Replay outputs not paired yet, per kind, in timeline order.
    var replayOutputs: [TraceKind: [Observed]] = [:]
    /// Trace outputs without a pair since the kind's last pair.
    var traceGap: [TraceKind: [Observed]] = [:]
    var traceCounts: [TraceKind: Int] = [:]
    var replayCounts: [TraceKind: Int] = [:]
    var replayAfterEnd: [TraceKind: Int] = [:]
    var divergences: [Verdict.Divergence] = []
    var divergenceCount = 0
    /// Known once the trace has ended.
    var endMs: Millis?
    /// Each judged output line's rule and whether the verdict lists it, when asked for (set to
    /// `[:]` before the first line): comparing two traces names an output's rule by its own
    /// trace's judging.
    package var lineJudgements: [Int: LineJudgement]?

    /// How many outputs of one kind wait for a pair before the oldest are judged anyway.
    static let gapLimit = 2000
    /// How many of the replay's unpaired outputs a leftover trace output is compared with.
    static let gapLookahead = 64
    /// How many outputs around an input are kept to read a timer's order from.
    static let evidenceLimit = 1000
    /// How many of the replay's last outputs are kept to read an unexpected line's cause from.
    static let recentLimit = 32

    /// `sessionId`: the replay's id (its server-made request ids derive from it, H4).
    /// `toleranceMs`: replaces the trace's own (0–10,000). `label`: the replay's (a kept one's).
    /// `keepingTimeline`: the replay's entries are kept for `takeTimeline()`, and `finish()`
    /// ends them with a `verdict` entry (what a kept replay stores).
    package init(sessionId: String = "replay", keepingTimeline: Bool = false, toleranceMs: Millis? = nil, label: String? = nil) {
        self.sessionId = sessionId
        self.label = label
        self.keepsTimeline = keepingTimeline
        self.toleranceOverride = toleranceMs.map { min(max($0, 0), TraceHeader.largestToleranceMs) }
    }

    /// The outputs the pass holds now beyond the replay's own state (waiting to be paired,
    /// unpaired, or kept as evidence around an input): bounded, whatever the trace's length.
    var heldOutputs: Int {
        undecided.count - undecidedStart + replayOutputs.values.reduce(0) { $0 + $1.count }
            + traceGap.values.reduce(0) { $0 + $1.count } + before.count + after.count + lastInputOutputs.count
            + pending.count - pendingStart + requestLines.count + bindable.count + provisionals.count + recentReplay.count + inputSeqs.count
    }

    /// Verifies a whole trace held in memory.
    package static func verify(_ text: String, sessionId: String = "replay") throws(TraceProblem) -> Verdict {
        try verify(bytes: text.utf8, sessionId: sessionId)
    }

    /// Verifies a whole trace held as bytes, its lines separated by `\n`.
    package static func verify(bytes: some Collection<UInt8>, sessionId: String = "replay",
                               toleranceMs: Millis? = nil) throws(TraceProblem) -> Verdict {
        var verifier = HostTraceVerifier(sessionId: sessionId, toleranceMs: toleranceMs)
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            try verifier.feed(line: line)
        }
        return try verifier.finish()
    }

    /// One line of the trace, without its `\n`.
    package mutating func feed(line: some Collection<UInt8>) throws(TraceProblem) {
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
            var observed = Observed(output)
            observed.afterInput = pendingInput?.line
            note(observed)
            if pendingInput == nil { append(observed, to: &before) } else { append(observed, to: &after) }
            if judged.contains(output.kind) {
                traceCounts[output.kind, default: 0] += 1
                undecided.append(observed)
            }
        case .end, .skipped:
            break
        }
    }

    /// The replay's entries kept since the last call (`keepingTimeline`), in order: a kept
    /// replay is stored as it goes, not held whole.
    package mutating func takeTimeline() -> [TimelineEntry] {
        defer { timeline = [] }
        return timeline
    }

    /// After the last line: replays to `endMs` plus the tolerance and pairs what is left.
    package mutating func finish() throws(TraceProblem) -> Verdict {
        let end = try reader.endMs()
        endMs = end
        if let pending = pendingInput {
            try replay(pending)
            pendingInput = nil
        }
        if reader.endLine == nil, reader.header?.endMs == nil {
            reader.warnNoEnd(pending: session.map { $0.isClosed ? [] : $0.watchdogs.filter { $0.dueAtMs > end } } ?? [])
        }
        if let session, !session.isClosed, end + tolerance > session.nowMs {
            try step(.clock(.advanceTo(end + tolerance)), line: reader.lineNumber)
        }
        bindPending(before: nil)
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

    mutating func note(_ input: TraceInput) {
        for id in input.input.requestIds where !knownIds.contains(id) {
            knownIds.insert(id)
            if case .webEvent = input.input {
                // Given only if the replay takes it (`noteGiven`): a Web event may name an id
                // that no request has yet.
                webNamedIds.insert(id)
            } else {
                // A caller's id: the same on both sides, so no line binds another id to it.
                give(id)
            }
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

    mutating func note(_ output: Observed) {
        if let id = output.namedId, knownIds.insert(id).inserted || webNamedIds.remove(id) != nil {
            pending.append(output)  // host-minted (unless the replay takes a Web event's): bound in line order
        }
        if output.kind == .emit || output.kind == .navigation, let id = output.namedId, requestLines[id] == nil,
           binding[id] == nil, !givenIds.contains(id), !unboundIds.contains(id) {
            requestLines[id] = output
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

    /// An id that is the same on both sides: no line binds another id to it.
    mutating func give(_ id: String) {
        givenIds.insert(id)
        boundReplayIds.insert(id)
        webNamedIds.remove(id)
    }

    func append(_ output: Observed, to list: inout [Observed]) {
        list.append(output)
        if list.count > Self.evidenceLimit { list.removeFirst(list.count - Self.evidenceLimit) }
    }
}

/// How the verifier judged one output line of its trace.
package struct LineJudgement: Sendable, Equatable {
    /// The rule of the line's output: its replay pair's, or the one it breaks.
    package var rule: Rule
    /// Whether the verdict lists the line as a divergence.
    package var diverges: Bool
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

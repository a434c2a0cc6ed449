/// Pairing each output the trace shows with the replay's, and what an unpaired one breaks.
extension HostTraceVerifier {
    // MARK: Pairing

    /// Decides every trace output the replay has passed by more than the tolerance (`nil`: all).
    mutating func decide(upTo frontier: Millis?) {
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

    mutating func decide(_ output: Observed) {
        let kind = output.kind
        // Ids bind in line order: every line up to this one first.
        if let line = output.line { bindPending(before: line + 1) }
        let queue = replayOutputs[kind] ?? []
        if let index = pairIndex(of: output, in: queue), !skipsWhatTheNextPairs(output, queue: queue, index: index) {
            if let line = output.line { lineJudgements?[line] = LineJudgement(rule: queue[index].rule ?? Self.defaultRule(kind), diverges: false) }
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

    /// Whether pairing `output` with `queue[index]` would pass over replay outputs that the
    /// trace's next lines of the kind account for better (`OutputPairing.skipsWhatTheNextPairs`).
    func skipsWhatTheNextPairs(_ output: Observed, queue: [Observed], index: Int) -> Bool {
        guard index > 0 else { return false }
        let later = undecided[undecidedStart...].prefix(Self.gapLookahead).filter { $0.kind == output.kind }
        return OutputPairing.skipsWhatTheNextPairs(output, later: later, queue: queue[...], index: index, tolerance: tolerance,
                                                   lookahead: Self.gapLookahead, equal: equal)
    }

    /// The first replay output in `queue` (in time order) within the tolerance of `output` that
    /// equals it.
    func pairIndex(of output: Observed, in queue: [Observed]) -> Int? {
        OutputPairing.pairIndex(of: output, in: queue[...], tolerance: tolerance, equal: equal)
    }

    /// A judged kind's unpaired replay outputs past `gapLimit` that no trace output can
    /// pair with any more (a trace that records the kind and has none of them) are judged, the
    /// oldest half at a time, so memory stays bounded.
    mutating func prune() {
        let oldest = undecidedStart < undecided.count ? undecided[undecidedStart].atMs : reader.lastAtMs
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

    func equal(_ trace: Observed, _ replay: Observed) -> Bool {
        TraceComparison.equal(trace: trace, replay: replay, mapId: { binding[$0]?.replayId ?? $0 })
    }

    /// Between two pairs: leftovers pair in order as `late`/`early` (equal content) or
    /// `different` (same type, within the tolerance); the rest are `missing` or `unexpected`.
    /// A host-minted id nothing bound matches any replay id there.
    mutating func resolveGap(_ kind: TraceKind, trace: [Observed], replay: [Observed]) {
        let unbound = unboundIds
        let leftovers = OutputPairing.leftovers(
            first: trace, second: replay, tolerance: tolerance, lookahead: Self.gapLookahead, equal: equal,
            loose: { output, candidate in
                (output.namedId.map(unbound.contains) ?? false) && TraceComparison.equalMasked(trace: output, replay: candidate)
            },
            onlyPairs: isAfterEnd)
        for leftover in leftovers {
            switch leftover {
            case let .apart(output, expected):
                let delta = output.atMs - expected.atMs
                let rule = expected.rule ?? Self.defaultRule(kind)
                record(Verdict.Divergence(
                    line: output.line, atMs: output.atMs, kind: kind, type: output.type, problem: delta > 0 ? .late : .early,
                    rule: rule, expected: expected.shown, actual: output.shown, deltaMs: delta,
                    detail: "\(rule.rawValue): the host recorded \(Self.describe(output)) at \(output.atMs) ms, "
                        + "\(abs(delta)) ms \(delta > 0 ? "after" : "before") the rules' \(expected.atMs) ms (tolerance \(tolerance) ms)",
                    replaySeq: expected.seq))
            case let .different(output, expected):
                let rule = expected.rule ?? Self.defaultRule(kind)
                record(Verdict.Divergence(
                    line: output.line, atMs: output.atMs, kind: kind, type: output.type, problem: .different, rule: rule,
                    expected: expected.shown, actual: output.shown, deltaMs: nil,
                    detail: "\(rule.rawValue): at \(output.atMs) ms the host recorded \(Self.describe(output)) where the rules make \(Self.describe(expected))"
                        + idsDiffer(output, expected),
                    replaySeq: expected.seq))
            case let .onlyFirst(output):
                let rule = unexpectedRule(output)
                record(Verdict.Divergence(
                    line: output.line, atMs: output.atMs, kind: kind, type: output.type, problem: .unexpected, rule: rule,
                    expected: nil, actual: output.shown, deltaMs: nil,
                    detail: "\(rule.rawValue): the host recorded \(Self.describe(output)) at \(output.atMs) ms (line \(output.line ?? 0)); the rules make none there"))
            case let .onlySecond(expected):
                missing(expected)
            }
        }
    }

    /// Where a trace output and the rules' differ only in the id they name, which ids (the
    /// rules' in the trace's words where a line was bound to it): the two descriptions alone
    /// read the same.
    func idsDiffer(_ output: Observed, _ expected: Observed) -> String {
        guard TraceComparison.equalMasked(trace: output, replay: expected), let replayId = expected.namedId else { return "" }
        let rules = traceIdOf[replayId] ?? (givenIds.contains(replayId) ? replayId
            : "\(replayId) (the replay's own: no line of the trace was bound to it)")
        return "; the ids differ: the host's \(output.namedId ?? "none"), the rules' \(rules)"
    }

    /// Whether a replay output comes after the recording stopped: it only pairs (equal
    /// content), never `missing`, nor what a host's output is `different` from.
    func isAfterEnd(_ expected: Observed) -> Bool {
        guard let stop = endMs ?? reader.header?.endMs else { return false }
        return expected.atMs > stop
    }

    /// A replay output nothing paired: `missing`, unless it comes after the recording stopped.
    mutating func missing(_ expected: Observed) {
        if isAfterEnd(expected) {
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

    mutating func record(_ divergence: Verdict.Divergence) {
        divergenceCount += 1
        if let line = divergence.line { lineJudgements?[line] = LineJudgement(rule: divergence.rule, diverges: true) }
        var divergence = divergence
        // The rules' output in the trace's words: a replay id a trace line was bound to is shown
        // as that line's id (expected and actual then differ only where the host did).
        if case let .string(replayId)? = divergence.expected?["requestId"], let traceId = traceIdOf[replayId],
           case var .object(members)? = divergence.expected,
           let at = members.firstIndex(where: { $0.0 == "requestId" }) {
            members[at].1 = .string(traceId)
            divergence.expected = .object(members)
        }
        // Kept in verdict order, at most the listed number (outputs are judged nearly in order).
        if divergences.count >= Verdict.listedDivergences {
            guard Verdict.Divergence.before(divergence, divergences[divergences.count - 1]) else { return }
            divergences.removeLast()
        }
        let index = divergences.lastIndex { !Verdict.Divergence.before(divergence, $0) }.map { $0 + 1 } ?? 0
        divergences.insert(divergence, at: index)
    }

    // MARK: Rules of unexpected outputs (docs/TRACES.md, the rule table)

    func unexpectedRule(_ output: Observed) -> Rule {
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
            default:
                // Hidden: what hid it (a result or its timers, a clearing, a deadline) is known
                // to the replay's own hide of the same request near it, if it made one.
                if let rule = nearbyReplayRule(of: output) { return rule }
                return clearingTimes.contains(output.atMs) ? .h14 : .h13
            }
        case .pull:
            guard output.type == "refreshing" else { return .h11 }
            if let rule = nearbyReplayRule(of: output) { return rule }
            return pullGestureTimes.contains(output.atMs) ? .h10 : .h11
        case .analytics: return .h24
        case .resolution: return .h27
        }
    }

    /// The rule of the replay's output of the same kind, type and (bound) request near a trace
    /// output: where the table's rule depends on the cause, the replay knows it.
    func nearbyReplayRule(of output: Observed) -> Rule? {
        let id = output.requestId.map { binding[$0]?.replayId ?? $0 }
        let near = (recentReplay + (replayOutputs[output.kind] ?? [])).filter {
            $0.kind == output.kind && $0.type == output.type && abs($0.atMs - output.atMs) <= tolerance
        }
        return (near.first { $0.requestId == id } ?? near.first)?.rule
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

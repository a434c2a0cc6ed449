/// Replaying a trace's inputs on a session of this build, and binding the ids the trace's outputs
/// name to the replay's own.
extension HostTraceVerifier {
    // MARK: Replaying

    /// Applies one input of the trace at the time the binding rules give (docs/TRACES.md): every
    /// output line before the input binds, in line order; a timer due within the tolerance fires
    /// before or after it as the trace orders the timer's output and the input; the input
    /// applies no earlier than the replay outputs bound to the ids it names.
    mutating func replay(_ traced: TraceInput) throws(TraceProblem) {
        guard session != nil else { return }
        // Every line before the input binds first, in line order (looking ahead where the
        // replay has not made its output yet): an answer is never applied before the request it
        // names exists in the replay, and a line whose id is bound is no evidence of a timer
        // that would mint another.
        bindPending(before: traced.line)
        let current = session!
        // What the trace shows before the input that the replay's last input does not explain:
        // the outputs of timers the host fired before this input.
        let unexplained = Self.unexplained(before, by: lastInputOutputs)
        var applyAt = max(traced.atMs, current.nowMs)
        // What each timer would output, worked out once: both loops below may ask of one timer.
        var outputs: [Int: [Observed]] = [:]
        func outputsOf(_ index: Int) -> [Observed] {
            if let known = outputs[index] { return known }
            let fresh = self.outputsOf(current.watchdogs[index])
            outputs[index] = fresh
            return fresh
        }
        for (index, timer) in current.watchdogs.enumerated() where timer.dueAtMs > applyAt {
            guard timer.dueAtMs <= traced.atMs + tolerance, traceShows(outputsOf(index), in: unexplained) else { break }
            applyAt = timer.dueAtMs
        }
        // What the trace shows after the input that the input itself does not explain (worked
        // out only when a timer is due just before the input).
        var unexplainedAfter: [Observed]?
        for (index, timer) in current.watchdogs.enumerated() where timer.dueAtMs <= applyAt {
            guard timer.dueAtMs > current.nowMs, timer.dueAtMs + tolerance >= traced.atMs else { continue }
            let outputs = outputsOf(index)
            if unexplainedAfter == nil { unexplainedAfter = Self.unexplained(after, by: outputsOfInput(traced, at: applyAt)) }
            if traceShows(outputs, in: unexplainedAfter!), !traceShows(outputs, in: unexplained) {
                applyAt = max(current.nowMs, timer.dueAtMs - 1)
                break
            }
        }
        if applyAt > current.nowMs { try step(.clock(.advanceTo(applyAt)), line: traced.line) }
        var floor = session!.nowMs
        for id in traced.input.requestIds { if let bound = binding[id] { floor = max(floor, bound.atMs) } }
        if floor > session!.nowMs { try step(.clock(.advanceTo(floor)), line: traced.line) }
        inputSeqs[traced.line] = session!.lastSeq + 1
        let produced = try step(traced.input.mappingRequestIds { binding[$0]?.replayId ?? $0 }, line: traced.line)
        noteGiven(traced.input)
        lastInputOutputs = produced
        decide(upTo: session!.nowMs)
    }

    /// Applies one input to the replay; returns the outputs it made.
    @discardableResult
    mutating func step(_ input: Input, line: Int) throws(TraceProblem) -> [Observed] {
        guard var current = session else { return [] }
        do throws(InputError) {
            let applied = try current.apply(input, ledger: ledger)
            session = current
            ledger.apply(applied.ledgerWrites)
            return take(applied.entries)
        } catch {
            let problem = InputProblem(error)
            throw TraceProblem(line: line, field: problem.field.map { "data.input.\($0)" }, "the replay refused the input: \(problem.detail)")
        }
    }

    /// Keeps the replay's new entries: judged outputs wait for their pair, outputs naming an id
    /// wait for a line to bind to them; bindings made on a look-ahead are settled.
    @discardableResult
    mutating func take(_ entries: [TimelineEntry]) -> [Observed] {
        if keepsTimeline { timeline += entries }
        var outputs: [Observed] = []
        for entry in entries {
            guard let output = Observed(entry) else { continue }
            outputs.append(output)
            if output.namedId != nil { bindable.append(output) }
            guard judged.contains(output.kind) else { continue }
            recentReplay.append(output)
            if recentReplay.count > Self.recentLimit { recentReplay.removeFirst(recentReplay.count - Self.recentLimit) }
            replayOutputs[output.kind, default: []].append(output)
            replayCounts[output.kind, default: 0] += 1
        }
        settleProvisional()
        return outputs
    }

    /// What firing the timers up to and including `timer` would output at its due time, on a
    /// copy of the replay.
    func outputsOf(_ timer: Watchdog) -> [Observed] {
        guard var copy = session else { return [] }
        guard let applied = try? copy.apply(.clock(.advanceTo(timer.dueAtMs)), ledger: ledger) else { return [] }
        return applied.entries.compactMap(Observed.init).filter { $0.atMs == timer.dueAtMs }
    }

    /// What the input would output applied at `time` (after the timers due by then), on a copy.
    func outputsOfInput(_ traced: TraceInput, at time: Millis) -> [Observed] {
        guard var copy = session else { return [] }
        if time > copy.nowMs { _ = try? copy.apply(.clock(.advanceTo(time)), ledger: ledger) }
        let input = traced.input.mappingRequestIds { binding[$0]?.replayId ?? $0 }
        return ((try? copy.apply(input, ledger: ledger))?.entries ?? []).compactMap(Observed.init)
    }

    /// Whether one of a timer's `outputs` is in `trace`, within the tolerance of its time: equal
    /// with ids masked, where an id the line names is one it may stand for (bound to it, given by
    /// an input and so the same, or a host-minted one not bound yet). A timer that makes an
    /// output naming an id of a kind the trace holds is shown only by such an output: an
    /// overlay or analytics line says nothing of which timer made it (an overlay line of the
    /// wrong state beside a soft deadline moved the input after the deadline's reload).
    func traceShows(_ outputs: [Observed], in trace: [Observed]) -> Bool {
        let naming = outputs.filter { $0.namedId != nil && ($0.kind == .emit || $0.kind == .navigation || judged.contains($0.kind)) }
        return (naming.isEmpty ? outputs : naming).contains { output in
            trace.contains { line in
                guard abs(line.atMs - output.atMs) <= tolerance, TraceComparison.equalMasked(trace: line, replay: output) else { return false }
                guard let id = line.namedId, let replayId = output.namedId else { return true }
                if let bound = binding[id] { return bound.replayId == replayId }
                return givenIds.contains(id) ? id == replayId : true
            }
        }
    }

    /// The trace's outputs less those (ids masked) that `replay` made, each taken once.
    static func unexplained(_ trace: [Observed], by replay: [Observed]) -> [Observed] {
        var left = replay
        return trace.filter { output in
            guard let index = left.firstIndex(where: { $0.kind == output.kind && TraceComparison.equalMasked(trace: output, replay: $0) }) else {
                return true
            }
            left.remove(at: index)
            return false
        }
    }

    /// The ids a Web event named first that the replay took as its own (its ledger holds
    /// them now): Web made them up, so they are the same on both sides. One it did not take
    /// (a render fact's, say) is host-minted if an output line names it later.
    mutating func noteGiven(_ input: Input) {
        guard case .webEvent = input else { return }
        for id in input.requestIds where binding[id] == nil && !unboundIds.contains(id) && !givenIds.contains(id) {
            if ledger.record(for: id) != nil { give(id) }
        }
    }

    // MARK: Binding

    /// Binds the ids first named by the lines waiting, in line order, up to (not including)
    /// line `limit` (`nil`: all). A line whose candidates the replay has not made yet looks
    /// ahead by firing timers only, on a copy, up to its time plus the tolerance; what it binds
    /// there is settled once the replay itself gets there.
    mutating func bindPending(before limit: Int?) {
        while pendingStart < pending.count {
            let output = pending[pendingStart]
            if let limit, let line = output.line, line >= limit { break }
            pendingStart += 1
            bind(output, provisional: false)
        }
        if pendingStart > 256, pendingStart * 2 > pending.count {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        pruneBindable()
    }

    /// The first unbound replay output of the line's kind within the tolerance that equals it
    /// with ids masked, failing that of the same type, whose request the same kind of output
    /// made; none: the id stays unbound.
    mutating func bind(_ output: Observed, provisional: Bool) {
        guard let id = output.namedId else { return }
        guard binding[id] == nil, !givenIds.contains(id), let current = session else {
            requestLines.removeValue(forKey: id)
            return
        }
        var candidates = bindable
        let horizon = output.atMs + tolerance
        if horizon > current.nowMs, !provisional { candidates += lookahead(to: horizon) }
        // A spinner or header mirrors a request: the replay's output of a request another kind
        // of output made (a pull's refreshRequested, a recovery reload's navigation) is not the
        // one the host's line mirrors, even at the same instant.
        var madeBy: [String: Set<TraceKind>] = [:]
        if requestLines[id] != nil {
            for made in candidates where made.kind == .emit || made.kind == .navigation {
                if let replayId = made.namedId { madeBy[replayId, default: []].insert(made.kind) }
            }
        }
        let open = candidates.filter { candidate in
            guard candidate.kind == output.kind, let replayId = candidate.namedId else { return false }
            guard !boundReplayIds.contains(replayId), abs(candidate.atMs - output.atMs) <= tolerance else { return false }
            guard let request = requestLines[id], let made = madeBy[replayId] else { return true }
            return made.contains(request.kind)
        }
        // The host's processing order first: what the line's input or a later timer made, before
        // what was made earlier (within the tolerance too).
        let floor = output.afterInput.flatMap { inputSeqs[$0] } ?? 0
        let ordered = open.filter { ($0.seq ?? 0) >= floor } + open.filter { ($0.seq ?? 0) < floor }
        guard let chosen = ordered.first(where: { TraceComparison.equalMasked(trace: output, replay: $0) })
            ?? ordered.first(where: { $0.type == output.type }),
            let replayId = chosen.namedId
        else {
            unboundIds.insert(id)
            requestLines.removeValue(forKey: id)
            return
        }
        binding[id] = (replayId, chosen.atMs)
        boundReplayIds.insert(replayId)
        traceIdOf[replayId] = id
        // The replay has made everything up to its clock: a later output is the look-ahead's.
        if chosen.atMs > current.nowMs {
            provisionals.append(Provisional(line: output, id: id, atMs: chosen.atMs))
        } else {
            requestLines.removeValue(forKey: id)
        }
    }

    /// What firing the timers only would output up to `horizon`, on a copy of the replay (kept
    /// while the replay stands still).
    mutating func lookahead(to horizon: Millis) -> [Observed] {
        guard let current = session else { return [] }
        if let cached = lookaheadCache, cached.step == current.step, cached.horizon >= horizon {
            return cached.outputs.filter { $0.atMs <= horizon }
        }
        var copy = current
        let outputs = (try? copy.apply(.clock(.advanceTo(horizon)), ledger: ledger))?.entries.compactMap(Observed.init)
            .filter { $0.namedId != nil } ?? []
        lookaheadCache = (current.step, horizon, outputs)
        return outputs
    }

    /// A binding made on a look-ahead names the id the copy minted; the replay mints its own
    /// once it gets there (an input at the same instant may take the number first). Once the
    /// replay has passed the bound output's time, the line binds again on what it really made.
    mutating func settleProvisional() {
        guard !provisionals.isEmpty, let now = session?.nowMs else { return }
        let due = provisionals.filter { $0.atMs <= now }
        guard !due.isEmpty else { return }
        provisionals.removeAll { $0.atMs <= now }
        for provisional in due {
            if let bound = binding.removeValue(forKey: provisional.id) {
                boundReplayIds.remove(bound.replayId)
                traceIdOf.removeValue(forKey: bound.replayId)
            }
        }
        for provisional in due { bind(provisional.line, provisional: true) }
    }

    /// Replay outputs no line waiting or still to come can bind to any more are dropped, and so
    /// are the inputs no line waiting came after.
    mutating func pruneBindable() {
        if inputSeqs.count > 16 {
            let waiting = pending[pendingStart...].compactMap(\.afterInput) + provisionals.compactMap(\.line.afterInput)
            let oldest = waiting.min() ?? pendingInput?.line ?? Int.max
            inputSeqs = inputSeqs.filter { $0.key >= oldest }
        }
        let oldest = pendingStart < pending.count ? min(pending[pendingStart].atMs, reader.lastAtMs) : reader.lastAtMs
        let horizon = provisionals.map(\.atMs).min().map { min($0, oldest) } ?? oldest
        guard let first = bindable.first, first.atMs + tolerance < horizon else { return }
        bindable.removeAll { $0.atMs + tolerance < horizon || $0.namedId.map(boundReplayIds.contains) == true }
    }
}

/// A line bound on a look-ahead, to bind again once the replay reaches the output's time.
struct Provisional: Sendable {
    var line: Observed
    var id: String
    var atMs: Millis
}

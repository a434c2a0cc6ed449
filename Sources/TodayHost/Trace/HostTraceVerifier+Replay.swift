/// Replaying a trace's inputs on a session of this build, and binding the ids the trace's outputs
/// name to the replay's own.
extension HostTraceVerifier {
    // MARK: Replaying

    /// Applies one input of the trace at the time the binding rules give (docs/TRACES.md):
    /// the latest of its own time, the replay's clock and every bound output it names; a timer
    /// due within the tolerance fires before or after it as the trace orders the timer's output.
    mutating func replay(_ traced: TraceInput) throws(TraceProblem) {
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

    mutating func step(_ input: Input, line: Int) throws(TraceProblem) {
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

    mutating func take(_ entries: [TimelineEntry]) {
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
    func outputsOf(_ timer: Watchdog) -> [Observed] {
        guard var copy = session else { return [] }
        guard let applied = try? copy.apply(.clock(.advanceTo(timer.dueAtMs)), ledger: ledger) else { return [] }
        return applied.entries.compactMap(Observed.init).filter { $0.atMs == timer.dueAtMs }
    }

    /// Whether one of `outputs` is in `trace` (ids masked), within the tolerance of its time.
    func traceShows(_ outputs: [Observed], in trace: [Observed]) -> Bool {
        outputs.contains { output in
            trace.contains { abs($0.atMs - output.atMs) <= tolerance && TraceComparison.equalMasked(trace: $0, replay: output) }
        }
    }

    // MARK: Binding

    /// Binds the id `output` names for the first time, looking ahead on a copy of the replay by
    /// firing timers only, up to the output's time plus the tolerance.
    mutating func bindLookingAhead(_ output: Observed) {
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
    mutating func bind(_ output: Observed, among candidates: [Observed]) {
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
}

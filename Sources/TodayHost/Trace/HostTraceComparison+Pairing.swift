/// Pairing the outputs of two aligned traces, per kind, as the verifier pairs a trace with its
/// replay (`OutputPairing`), and naming each difference's rule.
extension TracePairComparer {
    /// Every kind both traces record, paired; the comparison.
    func pair() -> HostTraceComparison {
        let kinds = a.header.recorded.filter(b.header.recorded.contains).sorted()
        var differences: [HostTraceComparison.Difference] = []
        var compared: [(TraceKind, Int)] = []
        for kind in kinds {
            let first = a.outputs.filter { $0.kind == kind }.map(Observed.init)
            let second = b.outputs.filter { $0.kind == kind }.map(Observed.init)
            compared.append((kind, max(first.count, second.count)))
            differences += pair(first, second).compactMap(difference)
        }
        differences.sort(by: HostTraceComparison.Difference.before)
        let notCompared = Set(a.header.recorded).symmetricDifference(b.header.recorded).sorted()
        return HostTraceComparison(toleranceMs: tolerance, compared: compared, notCompared: notCompared, inputs: a.inputs.count,
                                   differences: Array(differences.prefix(HostTraceComparison.listedDifferences)),
                                   differenceCount: differences.count, warnings: warnings, warningCount: warningCount,
                                   a: a.verdict, b: b.verdict)
    }

    /// One kind's outputs of A and B (each in time order): an output of A pairs with the
    /// earliest unpaired output of B of equal content within the tolerance, pairs never cross;
    /// what is left between two pairs is returned.
    func pair(_ first: [Observed], _ second: [Observed]) -> [OutputPairing.Leftover] {
        let equal: (Observed, Observed) -> Bool = { x, y in self.equal(x, y, mapId: { self.binding[$0] ?? $0 }) }
        let loose: (Observed, Observed) -> Bool = { x, y in
            (x.namedId.map(unboundInA.contains) ?? false) && self.equal(x, y, mapId: { _ in "*" }, mapOther: { _ in "*" })
        }
        var leftovers: [OutputPairing.Leftover] = []
        var start = 0
        var gap: [Observed] = []
        for (index, output) in first.enumerated() {
            let queue = second[start...]
            let later = Array(first[(index + 1)...].prefix(HostTraceVerifier.gapLookahead))
            guard let paired = OutputPairing.pairIndex(of: output, in: queue, tolerance: tolerance, equal: equal),
                  !OutputPairing.skipsWhatTheNextPairs(output, later: later, queue: queue, index: paired, tolerance: tolerance,
                                                       lookahead: HostTraceVerifier.gapLookahead, equal: equal)
            else {
                gap.append(output)
                continue
            }
            leftovers += OutputPairing.leftovers(first: gap, second: Array(second[start..<paired]), tolerance: tolerance,
                                                 lookahead: HostTraceVerifier.gapLookahead, equal: equal, loose: loose)
            gap = []
            start = paired + 1
        }
        leftovers += OutputPairing.leftovers(first: gap, second: Array(second[start...]), tolerance: tolerance,
                                             lookahead: HostTraceVerifier.gapLookahead, equal: equal, loose: loose)
        return leftovers
    }

    /// What a leftover is as a difference; `nil` for an output of one side after the other
    /// stopped recording (it only pairs).
    func difference(_ leftover: OutputPairing.Leftover) -> HostTraceComparison.Difference? {
        switch leftover {
        case let .onlyFirst(x):
            return only(x, in: .a)
        case let .onlySecond(y):
            return only(y, in: .b)
        case let .apart(x, y):
            let (rule, side) = governing(x, y)
            let delta = y.atMs - x.atMs
            return HostTraceComparison.Difference(
                kind: x.kind, type: x.type, problem: .apart, rule: rule, side: side, a: place(x), b: place(y), deltaMs: delta,
                detail: "\(rule.rawValue): B recorded \(HostTraceVerifier.describe(y)) at \(y.atMs) ms (line \(y.line!)), "
                    + "\(abs(delta)) ms \(delta > 0 ? "after" : "before") A's at \(x.atMs) ms (line \(x.line!); tolerance \(tolerance) ms)"
                    + Self.verdicts(side, rule))
        case let .different(x, y):
            let (rule, side) = governing(x, y)
            return HostTraceComparison.Difference(
                kind: x.kind, type: x.type, problem: .different, rule: rule, side: side, a: place(x), b: place(y), deltaMs: y.atMs - x.atMs,
                detail: "\(rule.rawValue): A recorded \(HostTraceVerifier.describe(x)) at \(x.atMs) ms (line \(x.line!)) where B recorded "
                    + "\(HostTraceVerifier.describe(y)) at \(y.atMs) ms (line \(y.line!))" + Self.verdicts(side, rule))
        }
    }

    /// An output only `side` recorded: its rule is the one its own trace's judging names, or,
    /// where the other trace's verdict lists the same output `missing` near its time (the rules
    /// make it, the other host did not), the rule that verdict names.
    private func only(_ output: Observed, in side: HostTraceComparison.Side) -> HostTraceComparison.Difference? {
        let (own, other) = side == .a ? (a, b) : (b, a)
        guard output.atMs <= other.endMs else { return nil }
        let judgement = own.lineJudgements[output.line!]
        let missing = other.verdict.divergences.first {
            $0.problem == .missing && $0.kind == output.kind && $0.type == output.type && abs($0.atMs - output.atMs) <= tolerance
        }
        let diverging: HostTraceComparison.Diverging?
        switch (judgement?.diverges == true, missing != nil) {
        case (true, true): diverging = .both
        case (true, false): diverging = side == .a ? .a : .b
        case (false, true): diverging = side == .a ? .b : .a
        case (false, false): diverging = nil
        }
        let rule = judgement?.diverges == true ? judgement!.rule : missing?.rule ?? judgement?.rule ?? HostTraceVerifier.defaultRule(output.kind)
        let (name, otherName) = side == .a ? ("A", "B") : ("B", "A")
        return HostTraceComparison.Difference(
            kind: output.kind, type: output.type, problem: side == .a ? .onlyA : .onlyB, rule: rule, side: diverging,
            a: side == .a ? place(output) : nil, b: side == .b ? place(output) : nil, deltaMs: nil,
            detail: "\(rule.rawValue): \(name) recorded \(HostTraceVerifier.describe(output)) at \(output.atMs) ms (line \(output.line!)) "
                + "and \(otherName) none" + Self.verdicts(diverging, rule))
    }

    /// The rule of a pair that differs: that of the side whose own verdict lists its output (A's
    /// when both or neither do), and which sides those are.
    private func governing(_ x: Observed, _ y: Observed) -> (Rule, HostTraceComparison.Diverging?) {
        let first = a.lineJudgements[x.line!], second = b.lineJudgements[y.line!]
        let fallback = first?.rule ?? second?.rule ?? HostTraceVerifier.defaultRule(x.kind)
        switch (first?.diverges == true, second?.diverges == true) {
        case (true, true): return (first!.rule, .both)
        case (true, false): return (first!.rule, .a)
        case (false, true): return (second!.rule, .b)
        case (false, false): return (fallback, nil)
        }
    }

    private func place(_ output: Observed) -> HostTraceComparison.Place {
        HostTraceComparison.Place(line: output.line!, atMs: output.atMs, output: output.shown)
    }

    /// The end of a difference's detail: which trace's own verdict breaks the rule there.
    private static func verdicts(_ side: HostTraceComparison.Diverging?, _ rule: Rule) -> String {
        switch side {
        case .a: return "; A breaks \(rule.rawValue) (its own verdict lists it)"
        case .b: return "; B breaks \(rule.rawValue) (its own verdict lists it)"
        case .both: return "; both break \(rule.rawValue) (their own verdicts list it)"
        case nil: return "; neither trace's own verdict lists it"
        }
    }
}

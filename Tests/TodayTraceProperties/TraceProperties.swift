import Foundation
import TodayHost

/// A property that did not hold for one scenario: which, what was seen, and the trace that
/// shows it (to paste into a test).
package struct PropertyFailure: Error, CustomStringConvertible {
    package var property: String
    package var detail: String
    package var trace: TraceText

    package var description: String { "\(property): \(detail)" }
}

/// What a mutant's first divergence may be instead of the edited line's own, and why: a
/// neighbour of the same kind and type within the tolerance takes its place (docs/TRACES.md:
/// binding and pairing fall back on the same `type`).
package enum MutantOutcome: String, Sendable, CaseIterable {
    /// The first divergence names the edited line's rule.
    case ownRule
    /// A neighbour of the same kind and type within the tolerance made the first divergence
    /// its own (`different`, or a pair shifted onto it): the edit is still found.
    case sameTypeNeighbour
    /// A removed output whose id a later input names (an answer): the input now names an id the
    /// trace never minted, the same on both sides, which the replay does not know, so what the
    /// answer does may diverge first. The edit is still found.
    case idNamedByLaterInput
    /// A moved output lands within the tolerance of another output of the same kind and type,
    /// which pairs in its place as equal content (and so on down the chain): the trace says
    /// the same within the tolerance, and conforms.
    case absorbedByEqualNeighbour
}

/// The properties of issue 33, item 2, over one random scenario: the session's own trace
/// verifies clean, so does the same trace as a real host records it (and any `recorded`
/// subset of it), with no tolerance the first divergence is the first delayed output, and each
/// single-edit mutant does not conform and names the rule of the edited line.
package enum TraceProperties {
    package static let replayId = "replay"
    package static let tolerance: Millis = 100

    /// Every non-empty subset of the judged kinds, as bit masks over `TraceKind.allCases`.
    package static let subsetCount = (1 << TraceKind.allCases.count) - 1

    package struct Tally: Sendable {
        package var mutants: [String: Int] = [:]
        package var outcomes: [MutantOutcome: Int] = [:]
        package var subsets: Set<Int> = []
        package var delayedOutputs = 0
        package var lines = 0
        /// The `type` of every input the sessions applied.
        package var inputs: Set<String> = []
        package init() {}
    }

    /// Checks one scenario; `tally` counts what was exercised.
    package static func check(_ scenario: TraceScenario, tally: inout Tally) -> [PropertyFailure] {
        let runner = scenario.run()
        var failures: [PropertyFailure] = []
        var rng = SeededRandom(seed: scenario.seed ^ 0x7A11_0C0D_E5EE_D000)

        tally.inputs.formUnion(runner.timeline.filter { $0.kind == .input }.map(\.type))
        let golden = TraceText.golden(runner)
        tally.lines += golden.entries.count + 1
        expectConforms(golden, "golden", &failures)

        let host = HostRecording(of: runner, rng: &rng)
        tally.delayedOutputs += host.delayedLines.count
        expectConforms(host.trace, "host", &failures)
        let mask = Int(scenario.seed % UInt64(subsetCount)) + 1
        tally.subsets.insert(mask)
        let kinds = TraceKind.allCases.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element.rawValue)
        expectConforms(host.trace.recording(only: kinds), "host recording \(kinds)", &failures)

        let strict = host.trace.with(toleranceMs: 0)
        switch verdict(strict) {
        case let .failure(problem):
            failures.append(PropertyFailure(property: "tolerance 0", detail: "a bad trace: \(problem.problemDetail)", trace: strict))
        case let .success(result):
            if let firstDelayed = host.delayedLines.first {
                let first = result.divergences.first
                if first?.line != firstDelayed || first?.problem != .late {
                    failures.append(PropertyFailure(
                        property: "tolerance 0",
                        detail: "the first delayed output is line \(firstDelayed); the first divergence: \(first.map(describe) ?? "none")",
                        trace: strict))
                }
            } else if !result.conforms {
                failures.append(PropertyFailure(property: "tolerance 0", detail: "nothing delayed, yet: \(result.divergences.map(\.detail))", trace: strict))
            }
        }

        for mutant in Mutant.Edit.allCases {
            guard let made = Mutant(mutant, of: golden, rng: &rng) else { continue }
            tally.mutants[mutant.rawValue, default: 0] += 1
            switch made.judge(verdict(made.trace)) {
            case let .success(outcome): tally.outcomes[outcome, default: 0] += 1
            case let .failure(failure): failures.append(failure)
            }
        }
        return failures
    }

    static func verdict(_ trace: TraceText) -> Result<Verdict, TraceProblem> {
        do throws(TraceProblem) {
            return .success(try HostTraceVerifier.verify(trace.text, sessionId: replayId))
        } catch {
            return .failure(error)
        }
    }

    static func expectConforms(_ trace: TraceText, _ property: String, _ failures: inout [PropertyFailure]) {
        switch verdict(trace) {
        case let .failure(problem):
            failures.append(PropertyFailure(property: property, detail: "a bad trace: \(problem.problemDetail)", trace: trace))
        case let .success(result) where !result.conforms:
            failures.append(PropertyFailure(property: property, detail: "\(result.divergenceCount) divergences, first \(describe(result.divergences[0]))",
                                            trace: trace))
        default:
            break
        }
    }

    static func describe(_ divergence: Verdict.Divergence) -> String {
        "line \(divergence.line.map(String.init) ?? "-") \(divergence.problem.rawValue) \(divergence.rule.rawValue) (\(divergence.detail))"
    }

    /// The property a failure broke, checked again on a shorter scenario: shrinking keeps a
    /// candidate while the same property still fails.
    package static func fails(_ scenario: TraceScenario, _ property: String) -> PropertyFailure? {
        var tally = Tally()
        return check(scenario, tally: &tally).first { $0.property == property }
    }

    /// Drops chunks of steps (halving the chunk) while the same property still fails; bounded.
    package static func shrink(_ scenario: TraceScenario, _ failure: PropertyFailure) -> (TraceScenario, PropertyFailure) {
        var current = scenario, found = failure
        var chunk = max(1, current.steps.count / 2), tries = 0
        while tries < 600 {
            var start = 0, removed = false
            while start < current.steps.count, tries < 600 {
                var candidate = current
                candidate.steps.removeSubrange(start..<min(start + chunk, candidate.steps.count))
                tries += 1
                if let again = fails(candidate, failure.property) {
                    current = candidate
                    found = again
                    removed = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 { if !removed { break } } else { chunk = max(1, chunk / 2) }
        }
        return (current, found)
    }
}

/// One single edit of a golden trace (issue 33): an output removed, duplicated, its `type`
/// changed, or moved past the tolerance — and what its first divergence must name.
package struct Mutant: Sendable {
    package enum Edit: String, Sendable, CaseIterable {
        case removed, duplicated, typeChanged, moved
    }

    package var edit: Edit
    package var trace: TraceText
    /// The edited output as the trace now has it (for `removed`, as it was).
    package var line: JSON
    /// Its line number in the mutant (for `removed`, the line it had).
    package var lineNumber: Int
    package var expectedRule: Rule
    /// Other outputs of the same kind and type within the tolerance (the fallback's neighbours).
    package var neighbours: [JSON]
    /// For a moved output: other outputs of the same kind and type within the tolerance of
    /// where it landed.
    package var landingNeighbours: [JSON] = []
    /// The edited line's rule before the edit.
    package var originalRule: Rule
    /// Whether an input after the edited line names the id it names.
    package var namedByLaterInput: Bool

    init?(_ edit: Edit, of golden: TraceText, rng: inout SeededRandom) {
        func namedLater(_ index: Int) -> Bool {
            guard let id = Self.namedId(golden.entries[index]) else { return false }
            return golden.entries[(index + 1)...].contains { $0.kind == "input" && $0["data"]?["input"]?["requestId"]?.stringValue == id }
        }
        let endMs = golden.header["endMs"]?.atMsValue ?? 0
        let outputs = golden.entries.indices.filter { index in
            guard let kind = golden.entries[index].kind, TraceKind(rawValue: kind) != nil else { return false }
            // Moved: only outputs whose id no later input names, with room before the end.
            return edit != .moved || (!namedLater(index) && (golden.entries[index].atMs ?? 0) + TraceProperties.tolerance < endMs)
        }
        guard !outputs.isEmpty else { return nil }
        let index = rng.pick(outputs)
        let original = golden.entries[index]
        originalRule = Rule(rawValue: original["rule"]?.stringValue ?? "") ?? .h4
        namedByLaterInput = namedLater(index)
        var entries = golden.entries
        self.edit = edit
        neighbours = []
        switch edit {
        case .removed:
            entries.remove(at: index)
            line = original
            lineNumber = index + 2
            expectedRule = Rule(rawValue: original["rule"]?.stringValue ?? "") ?? .h4
        case .duplicated:
            entries.insert(original, at: index + 1)
            line = original
            lineNumber = index + 3
            expectedRule = RuleTable.rule(of: original, at: index, in: golden.entries)
        case .typeChanged:
            let changed = Self.changingType(original, rng: &rng)
            entries[index] = changed
            line = changed
            lineNumber = index + 2
            expectedRule = RuleTable.rule(of: changed, at: index, in: golden.entries)
        case .moved:
            let room = endMs - (original.atMs ?? 0) - TraceProperties.tolerance
            let by = TraceProperties.tolerance + 1 + Millis(rng.below(Int(min(400, room))))
            var moved = original.setting("atMs", .int((original.atMs ?? 0) + by))
            entries.remove(at: index)
            let at = moved.atMs!
            let place = entries[index...].firstIndex { ($0.atMs ?? 0) > at } ?? entries.endIndex
            entries.insert(moved, at: place)
            let header = golden.header
            moved = original
            line = moved
            lineNumber = place + 2
            expectedRule = Rule(rawValue: original["rule"]?.stringValue ?? "") ?? .h4
            trace = TraceText(header: header, entries: entries)
            neighbours = Self.neighbours(of: line, in: golden.entries, except: index)
            landingNeighbours = Self.neighbours(of: line.setting("atMs", .int(at)), in: golden.entries, except: index)
            return
        }
        trace = TraceText(header: golden.header, entries: entries)
        neighbours = Self.neighbours(of: line, in: golden.entries, except: index)
    }

    /// Outputs of the line's kind and type within the tolerance of it, in `entries`.
    static func sameKindNear(_ line: JSON, in entries: [JSON]) -> [JSON] { neighbours(of: line, in: entries, except: nil) }

    static func neighbours(of line: JSON, in entries: [JSON], except index: Int?) -> [JSON] {
        entries.enumerated().filter { offset, entry in
            offset != index && entry.kind == line.kind && entry["type"] == line["type"]
                && abs((entry.atMs ?? 0) - (line.atMs ?? 0)) <= TraceProperties.tolerance
        }.map(\.element)
    }

    /// The first divergence must name the edited line's rule; where a neighbour of the same
    /// type takes its place, that case is named.
    func judge(_ result: Result<Verdict, TraceProblem>) -> Result<MutantOutcome, PropertyFailure> {
        let verdict: Verdict
        switch result {
        case let .failure(problem): return .failure(failure("a bad trace: \(problem.problemDetail)"))
        case let .success(value): verdict = value
        }
        guard let first = verdict.divergences.first else {
            if edit == .moved, !landingNeighbours.isEmpty { return .success(.absorbedByEqualNeighbour) }
            // A removed request whose answer follows: the answer now names an id the replay does
            // not know, so what it did (re-arming the recovery budget, say) is undone, and an equal
            // neighbour within the tolerance can stand for the removed output — the edited trace
            // is one a conforming host could have written (session seed 428893546: one recovery
            // reload at 5,042 ms for the rules' 5,000, its second not made).
            if edit == .removed, namedByLaterInput, !neighbours.isEmpty || !Self.sameKindNear(line, in: trace.entries).isEmpty {
                return .success(.idNamedByLaterInput)
            }
            return .failure(failure("conforms"))
        }
        let aboutTheLine: Bool
        switch edit {
        case .removed: aboutTheLine = first.problem == .missing && first.kind.rawValue == line.kind && first.type == line["type"]?.stringValue
        case .duplicated, .typeChanged: aboutTheLine = first.problem == .unexpected && first.line == lineNumber
        case .moved: aboutTheLine = (first.problem == .missing && first.atMs == line.atMs) || (first.problem == .late && first.line == lineNumber)
        }
        if aboutTheLine, first.rule == expectedRule { return .success(.ownRule) }
        if edit == .removed, namedByLaterInput { return .success(.idNamedByLaterInput) }
        // The fallback: a neighbour of the same kind and type near the edit made the first
        // divergence its own (its rule, near the edited line's time).
        let near = abs(first.atMs - (line.atMs ?? 0)) <= TraceProperties.tolerance + (edit == .moved ? 500 : 0)
        let neighbourRules = neighbours.compactMap { Rule(rawValue: $0["rule"]?.stringValue ?? "") }
        if near, first.kind.rawValue == line.kind,
           first.rule == expectedRule || first.rule == originalRule || neighbourRules.contains(first.rule) {
            return .success(.sameTypeNeighbour)
        }
        return .failure(failure("line \(lineNumber) (\(line.serialized())): expected \(expectedRule.rawValue) about it; "
            + "first divergence \(TraceProperties.describe(first))"))
    }

    func failure(_ detail: String) -> PropertyFailure {
        PropertyFailure(property: "mutant \(edit.rawValue)", detail: detail, trace: trace)
    }

    static func namedId(_ entry: JSON) -> String? {
        switch entry.kind {
        case "emit": return entry["data"]?["payload"]?["requestId"]?.stringValue
        case "resolution": return entry["data"]?["callId"]?.stringValue
        default: return entry["requestId"]?.stringValue
        }
    }

    /// The same output entering another state of its kind.
    static func changingType(_ entry: JSON, rng: inout SeededRandom) -> JSON {
        let type = entry["type"]?.stringValue ?? ""
        func other(_ types: [String]) -> String { rng.pick(types.filter { $0 != type }) }
        switch entry.kind {
        case "emit":
            let next = other(["todayPage.refreshRequested", "webView.visibilityWillChange", "webView.visibilityChanged", "todayPage.scrollToSection"])
            let payload = (entry["data"]?["payload"] ?? .object([])).setting("type", .string(next))
            return entry.setting("type", .string(next)).setting("data", (entry["data"] ?? .object([])).setting("payload", payload))
        case "navigation":
            let next = other(["initial", "recovery", "termination", "manualRepeat", "accountSwitch", "navigation"])
            return entry.setting("type", .string(next)).setting("data", (entry["data"] ?? .object([])).setting("cause", .string(next)))
        case "header": return entry.setting("type", .string(other(["refreshing", "updated", "failed"])))
        case "pull": return entry.setting("type", .string(type == "idle" ? "refreshing" : "idle"))
        case "overlay": return entry.setting("type", .string(type == "visible" ? "hidden" : "visible"))
        default: return entry.setting("type", .string(type + ".changed"))
        }
    }
}

/// docs/TRACES.md's table of rules for an output line, read on the trace around it: written
/// here again, apart from the verifier, so the test does not check the verifier against itself.
enum RuleTable {
    static func rule(of line: JSON, at index: Int, in entries: [JSON]) -> Rule {
        let type = line["type"]?.stringValue ?? ""
        let data = line["data"] ?? .null
        let before = entries[..<index]
        switch line.kind {
        case "navigation":
            return ["initial": .h3, "recovery": .h9, "termination": .h18, "manualRepeat": .h10, "accountSwitch": .h19,
                    "navigation": .h17][type] ?? .h3
        case "overlay": return type == "hidden" ? .h23 : .h3
        case "emit":
            let payload = data["payload"] ?? .null
            switch payload["type"]?.stringValue ?? type {
            case "todayPage.refreshRequested":
                return ["user_pull": .h10, "app_foreground": .h15, "live_widget_created": .h26][payload["reason"]?.stringValue ?? ""] ?? .h16
            case "webView.visibilityWillChange", "webView.visibilityChanged": return .h15
            case "todayPage.scrollToSection": return .h28
            default: return .h4
            }
        case "header":
            switch type {
            case "refreshing":
                let id = line["requestId"]?.stringValue
                let started = before.contains { $0.kind == "input" && $0["type"]?.stringValue == "todayPage.refreshStarted"
                    && $0["data"]?["input"]?["requestId"]?.stringValue == id }
                if started || id == nil { return .h12 }
                // No refreshStarted named it: whose request it mirrors tells the rule.
                if let request = before.last(where: { $0.kind == "emit" && $0["data"]?["payload"]?["type"]?.stringValue == "todayPage.refreshRequested"
                    && $0["data"]?["payload"]?["requestId"]?.stringValue == id })
                {
                    switch request["data"]?["payload"]?["reason"]?.stringValue {
                    case "user_pull": return .h10
                    case "tab_activated", nil: return .h16
                    default: return .h12
                    }
                }
                let pulled = before.contains { ($0.kind == "input" && $0["type"]?.stringValue == "pull" && $0["data"]?["input"]?["requestId"]?.stringValue == id)
                    || ($0.kind == "pull" && $0["requestId"]?.stringValue == id) }
                return pulled ? .h10 : .h12
            case "updated", "failed": return .h13
            default: return Rule(rawValue: line["rule"]?.stringValue ?? "") ?? .h13
            }
        case "pull":
            guard type == "refreshing" else { return .h11 }
            return before.contains { $0.kind == "input" && $0["type"]?.stringValue == "pull" && $0.atMs == line.atMs } ? .h10 : .h11
        case "analytics": return .h24
        default: return .h27
        }
    }
}

extension JSON {
    var atMsValue: Millis? { numberValue.map { Millis($0) } }
}

/// Two recordings of one scenario compared (docs/TRACES.md, "iOS against Android"): an iOS and
/// an Android host, or two builds of one app. Their inputs are aligned, each side's host-minted
/// ids are bound to the other's, and every output that differs is listed with its time on each
/// side and the rule that governs it, beside each trace's own verdict.
package struct HostTraceComparison: Sendable, Equatable {
    /// Which trace.
    package enum Side: String, Sendable {
        case a, b
    }

    /// Which trace's own verdict lists an output as a divergence.
    package enum Diverging: String, Sendable {
        case a, b, both
    }

    package enum Problem: String, Sendable {
        /// Only A recorded this output (B recorded none within the tolerance).
        case onlyA
        /// Only B recorded this output.
        case onlyB
        /// The same place in the sequence, different content.
        case different
        /// The same output, further apart than the tolerance (`deltaMs` = B's time − A's).
        case apart
    }

    /// An output line of one side, as a difference shows it.
    package struct Place: Sendable, Equatable {
        package var line: Int
        package var atMs: Millis
        /// An emit's payload, else its type, request id and data (as a verdict's `actual`).
        package var output: JSON

        package var json: JSON { ["line": .int(line), "atMs": .int(atMs), "output": output] }
    }

    package struct Difference: Sendable, Equatable {
        package var kind: TraceKind
        package var type: String
        package var problem: Problem
        /// The rule that governs the output: for `onlyA`/`onlyB` the rule of that output as its
        /// own trace's judging names it; for `different`/`apart` the rule of the side whose own
        /// verdict lists its output (A's when both or neither do).
        package var rule: Rule
        /// The side whose own verdict lists its output as a divergence (`nil`: neither does).
        package var side: Diverging?
        package var a: Place?
        package var b: Place?
        /// B's time minus A's (`apart`, `different`).
        package var deltaMs: Millis?
        /// One sentence a person can act on, beginning with the rule id.
        package var detail: String

        package var json: JSON {
            var members: [(String, JSON)] = [("kind", .string(kind.rawValue)), ("type", .string(type)),
                                             ("problem", .string(problem.rawValue)), ("rule", .string(rule.rawValue))]
            if let side { members.append(("side", .string(side.rawValue))) }
            if let a { members.append(("a", a.json)) }
            if let b { members.append(("b", b.json)) }
            if let deltaMs { members.append(("deltaMs", .int(deltaMs))) }
            members.append(("detail", .string(detail)))
            return .object(members)
        }

        /// The time it is listed by: the earlier side's.
        var atMs: Millis { min(a?.atMs ?? .max, b?.atMs ?? .max) }

        /// Listing order: by time, then A's line, then B's.
        static func before(_ x: Difference, _ y: Difference) -> Bool {
            if x.atMs != y.atMs { return x.atMs < y.atMs }
            if (x.a?.line ?? .max) != (y.a?.line ?? .max) { return (x.a?.line ?? .max) < (y.a?.line ?? .max) }
            return (x.b?.line ?? .max) < (y.b?.line ?? .max)
        }
    }

    /// Something that may explain a difference without being one: inputs recorded further apart
    /// than the tolerance, inputs with other content, creations with other settings.
    package struct Warning: Sendable, Equatable {
        package var aLine: Int
        package var bLine: Int
        package var detail: String
    }

    package var toleranceMs: Millis
    /// How many outputs of each kind both traces record were compared (the larger side).
    package var compared: [(TraceKind, Int)]
    /// The kinds only one trace records: not compared.
    package var notCompared: [TraceKind]
    /// How many inputs were aligned.
    package var inputs: Int
    /// The first `listedDifferences`, in listing order.
    package var differences: [Difference]
    package var differenceCount: Int
    /// The first `listedDifferences` warnings; `warningCount` counts all.
    package var warnings: [Warning]
    package var warningCount: Int
    /// Each trace judged against the rules on its own.
    package var a: Verdict
    package var b: Verdict

    package var identical: Bool { differenceCount == 0 }

    /// The most differences (and warnings) listed.
    package static let listedDifferences = 1000

    package static func == (lhs: HostTraceComparison, rhs: HostTraceComparison) -> Bool { lhs.json == rhs.json }

    package var json: JSON {
        var members: [(String, JSON)] = [
            ("identical", .bool(identical)), ("toleranceMs", .int(toleranceMs)),
            ("compared", .object(compared.map { ($0.0.rawValue, .int($0.1)) })),
            ("notCompared", .array(notCompared.map { .string($0.rawValue) })), ("inputs", .int(inputs)),
            ("differences", .array(differences.map(\.json))), ("differenceCount", .int(differenceCount)),
        ]
        if !warnings.isEmpty {
            members.append(("warnings", .array(warnings.map {
                ["aLine": .int($0.aLine), "bLine": .int($0.bLine), "detail": .string($0.detail)]
            })))
            members.append(("warningCount", .int(warningCount)))
        }
        members += [("a", a.json), ("b", b.json)]
        return .object(members)
    }
}

/// Two traces that cannot be compared: one is a bad trace (`400 invalid_trace`, naming the side
/// and the line), or their inputs do not record one scenario (`400 traces_not_comparable`).
package enum TracePairProblem: Error, Equatable, Sendable {
    case invalidTrace(HostTraceComparison.Side, TraceProblem)
    /// `field`: where, as `a: line N; b: line M` (one side's, when only one has the input).
    case notComparable(field: String, detail: String)

    /// The problem document's `field`.
    package var problemField: String {
        switch self {
        case let .invalidTrace(side, problem): return "\(side.rawValue): \(problem.problemField)"
        case let .notComparable(field, _): return field
        }
    }

    /// The problem document's `detail` (and what `compare-traces` prints).
    package var problemDetail: String {
        switch self {
        case let .invalidTrace(side, problem): return "trace \(side.rawValue.uppercased()): \(problem.problemDetail)"
        case let .notComparable(_, detail): return "the traces do not record one scenario: \(detail)"
        }
    }
}

extension HostTraceComparison {
    /// JUnit XML: one test case per compared kind, each difference a failure naming its rule and
    /// both lines, so any CI system shows the comparison.
    package var junit: String {
        let hosts = [a.host, b.host].contains { $0 != nil } ? " (A: \(a.host ?? "-"); B: \(b.host ?? "-"))" : ""
        return JUnitSuite(name: "host traces compared" + hosts, cases: compared.map { kind, count in
            JUnitSuite.Case(className: "todaysim.hostTraceComparison", name: "\(kind.rawValue): \(count) compared",
                            failures: differences.filter { $0.kind == kind }.map { difference in
                                let places = [difference.a.map { "A line \($0.line), \($0.atMs) ms" },
                                              difference.b.map { "B line \($0.line), \($0.atMs) ms" }].compactMap { $0 }
                                return JUnitSuite.Failure(
                                    message: "\(difference.rule.rawValue) \(difference.problem.rawValue) \(difference.type) (\(places.joined(separator: "; ")))",
                                    type: difference.rule.rawValue, text: difference.detail)
                            })
        }).xml
    }
}

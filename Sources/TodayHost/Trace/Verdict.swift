/// What verifying a host trace found (docs/TRACES.md, "The verdict").
package struct Verdict: Sendable, Equatable {
    package enum Problem: String, Sendable {
        /// The rules make this output; the real host did not.
        case missing
        /// The real host made this output; the rules do not.
        case unexpected
        /// The same place in the sequence, different content.
        case different
        /// The same output, outside the tolerance.
        case late, early
    }

    package struct Divergence: Sendable, Equatable {
        /// The trace's line (none for `missing`).
        package var line: Int?
        /// The trace's time; the replay's for `missing`.
        package var atMs: Millis
        package var kind: TraceKind
        package var type: String
        package var problem: Problem
        /// The one rule broken.
        package var rule: Rule
        package var expected: JSON?
        package var actual: JSON?
        /// Actual minus expected time (`late`, `early`).
        package var deltaMs: Millis?
        /// One sentence a person can act on, beginning with the rule id.
        package var detail: String
        /// The `seq` of the replay's entry that was expected (all but `unexpected`): with `keep`,
        /// that entry of the kept session, where the dashboard marks the divergence.
        package var replaySeq: Int?

        package var json: JSON {
            var members: [(String, JSON)] = []
            if let line { members.append(("line", .int(line))) }
            members += [("atMs", .int(atMs)), ("kind", .string(kind.rawValue)), ("type", .string(type)),
                        ("problem", .string(problem.rawValue)), ("rule", .string(rule.rawValue))]
            if let expected { members.append(("expected", expected)) }
            if let actual { members.append(("actual", actual)) }
            if let deltaMs { members.append(("deltaMs", .int(deltaMs))) }
            if let replaySeq { members.append(("replaySeq", .int(replaySeq))) }
            members.append(("detail", .string(detail)))
            return .object(members)
        }

        /// Verdict order: by time, then line, `missing` last.
        static func before(_ a: Divergence, _ b: Divergence) -> Bool {
            if a.atMs != b.atMs { return a.atMs < b.atMs }
            if (a.line == nil) != (b.line == nil) { return a.line != nil }
            return (a.line ?? 0) < (b.line ?? 0)
        }
    }

    /// An input field the API does not know, on the line that holds it.
    package struct Warning: Sendable, Equatable {
        package var line: Int
        package var field: String
        package var detail: String
    }

    package var host: String?
    package var toleranceMs: Millis
    package var endMs: Millis
    /// How many outputs of each judged kind were compared: the larger of the two sides.
    package var judged: [(TraceKind, Int)]
    /// The first `listedDivergences` in verdict order.
    package var divergences: [Divergence]
    package var divergenceCount: Int
    /// The first `TraceReader.listedWarnings` unknown input fields; `warningCount` counts all.
    package var warnings: [Warning]
    package var warningCount: Int
    /// The kept replay's id, if one was kept.
    package var session: String?

    package var conforms: Bool { divergenceCount == 0 }

    /// The most divergences a verdict lists (`divergenceCount` counts all).
    package static let listedDivergences = 1000

    package static func == (lhs: Verdict, rhs: Verdict) -> Bool { lhs.json == rhs.json }

    package var json: JSON {
        var members: [(String, JSON)] = [
            ("conforms", .bool(conforms)), ("host", .string(host)), ("toleranceMs", .int(toleranceMs)), ("endMs", .int(endMs)),
            ("judged", .object(judged.map { ($0.0.rawValue, .int($0.1)) })),
            ("divergences", .array(divergences.map(\.json))), ("divergenceCount", .int(divergenceCount)),
        ]
        if !warnings.isEmpty {
            members.append(("warnings", .array(warnings.map {
                ["line": .int($0.line), "field": .string($0.field), "detail": .string($0.detail)]
            })))
            members.append(("warningCount", .int(Int64(warningCount))))
        }
        members.append(("session", .string(session)))
        return .object(members)
    }
}

extension Verdict {
    /// JUnit XML: one test case per judged kind, each divergence a failure naming its rule and
    /// line, so any CI system shows the verdict.
    package var junit: String {
        let suite = "host trace" + (host.map { " (\($0))" } ?? "")
        return JUnitSuite(name: suite, cases: judged.map { kind, count in
            JUnitSuite.Case(className: "todaysim.hostTrace", name: "\(kind.rawValue): \(count) compared",
                            failures: divergences.filter { $0.kind == kind }.map { divergence in
                                let place = divergence.line.map { "line \($0), " } ?? ""
                                return JUnitSuite.Failure(
                                    message: "\(divergence.rule.rawValue) \(divergence.problem.rawValue) \(divergence.type) (\(place)\(divergence.atMs) ms)",
                                    type: divergence.rule.rawValue, text: divergence.detail)
                            })
        }).xml
    }
}

/// What an app's test targets see of todaysim (docs/TRACES.md, "In the app's tests"): a host
/// trace judged against the rules, in-process, and its verdict. This is the whole public face of
/// `TodayHost`; the engine behind it (the session, its coordinators, the JSON it reads, the
/// rules' table) is `package` access, for todaysim's own store and server, so an app's test
/// target that declares its own `PullSpinner`, `JSON`, `Input`, `Rule` or `Session` sees no
/// second one. Every name below is nested in `HostTrace`.
///
/// `TodayHostTesting` adds reading a trace from a file and the assertions for XCTest and Swift
/// Testing.
public enum HostTrace {
    /// The output kinds a trace records and a verdict judges, by the names the trace writes.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case emit, navigation, header, pull, overlay, analytics, resolution
    }

    /// How the host's output differs from the rules'.
    public enum Problem: String, Sendable, Hashable {
        /// The rules make this output; the host did not.
        case missing
        /// The host made this output; the rules do not.
        case unexpected
        /// The same place in the sequence, different content.
        case different
        /// The same output, outside the tolerance.
        case late, early
    }

    /// One output where the host and the rules part.
    public struct Divergence: Sendable, Hashable {
        /// The trace's line (`nil` for `missing`: the host wrote none).
        public var line: Int?
        /// The trace's time in milliseconds; the rules' time for `missing`.
        public var atMs: Int64
        public var kind: Kind
        /// The output's type (a header state, an emitted message's type, a navigation's cause, …).
        public var type: String
        public var problem: Problem
        /// The id of the one rule broken, as docs/RULES.md numbers it: `H11`.
        public var rule: String
        /// The rules' output and the host's, as JSON text (`nil` where there is none).
        public var expected: String?
        public var actual: String?
        /// The host's time minus the rules' (`late`, `early`).
        public var deltaMs: Int64?
        /// One sentence a person can act on, beginning with the rule id.
        public var detail: String
    }

    /// Something the verifier noticed that is not a divergence: an input field the API does not
    /// know (`field` under `data.input`), or a trace with no end line (`field` `end`).
    public struct Warning: Sendable, Hashable {
        public var line: Int
        public var field: String
        public var detail: String
    }

    /// What judging a trace found.
    public struct Verdict: Sendable, Hashable {
        /// No divergence.
        public var conforms: Bool { divergenceCount == 0 }
        /// The header's `host`.
        public var host: String?
        public var toleranceMs: Int64
        /// When recording stopped: the end line's time, the header's `endMs`, or the last line's.
        public var endMs: Int64
        /// How many outputs of each judged kind were compared (the larger of the two sides).
        public var judged: [Kind: Int]
        /// The first thousand, in order of time; `divergenceCount` counts all.
        public var divergences: [Divergence]
        public var divergenceCount: Int
        /// The first thousand; `warningCount` counts all.
        public var warnings: [Warning]
        public var warningCount: Int
        /// The verdict as `todaysim verify-host` prints it (JSON).
        public var json: String
    }

    /// A trace that could not be judged: unreadable, or a line the format refuses.
    public struct Unjudgeable: Error, CustomStringConvertible, Sendable {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Judges the trace `bytes` (its lines separated by `\n`; `\r\n` too). `toleranceMs`
    /// replaces the trace's own, as `todaysim verify-host --tolerance-ms` does; `name` is what
    /// an `Unjudgeable` calls the trace.
    public static func verify(_ bytes: some Collection<UInt8>, name: String = "host trace",
                              toleranceMs: Int64? = nil) throws(Unjudgeable) -> Verdict {
        do throws(TraceProblem) {
            return Verdict(try HostTraceVerifier.verify(bytes: bytes, toleranceMs: toleranceMs))
        } catch {
            throw Unjudgeable(description: "\(name) is not a trace todaysim can judge: \(error.problemDetail)")
        }
    }

    /// Judges a trace held as text.
    public static func verify(text: String, name: String = "host trace", toleranceMs: Int64? = nil) throws(Unjudgeable) -> Verdict {
        try verify(Array(text.utf8), name: name, toleranceMs: toleranceMs)
    }

    /// What an assertion says when `verdict` does not conform (nil when it does): a line for the
    /// trace, then each listed divergence — its rule, line (`-` for a missing output), time and
    /// problem, its one-sentence detail, and the rules' output beside the host's.
    public static func failureMessage(_ verdict: Verdict, name: String = "host trace") -> String? {
        guard !verdict.conforms else { return nil }
        let count = verdict.divergenceCount
        var lines = ["\(name) does not conform to the rules: \(count) divergence\(count == 1 ? "" : "s")"
            + (verdict.divergences.count < count ? " (the first \(verdict.divergences.count) listed)" : "")]
        for divergence in verdict.divergences {
            let line = divergence.line.map { "line \($0)" } ?? "line -"
            lines.append("  \(divergence.rule) \(line) at \(divergence.atMs) ms, \(divergence.problem.rawValue) "
                + "\(divergence.kind.rawValue) \(divergence.type)\(divergence.deltaMs.map { " (\($0 > 0 ? "+" : "")\($0) ms)" } ?? ""): "
                + divergence.detail)
            lines.append("      rules: \(divergence.expected ?? "none")  |  host: \(divergence.actual ?? "none")")
        }
        return lines.joined(separator: "\n")
    }
}

/// The engine's verdict, named where `HostTrace.Verdict` does not hide it (the fuzzer compiles
/// these sources into a module of another name, so not `TodayHost.Verdict`).
typealias EngineVerdict = Verdict

extension HostTrace.Verdict {
    /// The engine's verdict as the public face shows it.
    init(_ verdict: EngineVerdict) {
        host = verdict.host
        toleranceMs = verdict.toleranceMs
        endMs = verdict.endMs
        judged = Dictionary(verdict.judged.map { (HostTrace.Kind(rawValue: $0.0.rawValue)!, $0.1) }, uniquingKeysWith: +)
        divergences = verdict.divergences.map { divergence in
            HostTrace.Divergence(line: divergence.line, atMs: divergence.atMs, kind: HostTrace.Kind(rawValue: divergence.kind.rawValue)!,
                                 type: divergence.type, problem: HostTrace.Problem(rawValue: divergence.problem.rawValue)!,
                                 rule: divergence.rule.rawValue, expected: divergence.expected?.serialized(),
                                 actual: divergence.actual?.serialized(), deltaMs: divergence.deltaMs, detail: divergence.detail)
        }
        divergenceCount = verdict.divergenceCount
        warnings = verdict.warnings.map { HostTrace.Warning(line: $0.line, field: $0.field, detail: $0.detail) }
        warningCount = verdict.warningCount
        json = verdict.json.serialized()
    }
}

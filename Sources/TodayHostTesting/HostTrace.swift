import Foundation
import TodayHost

/// Judging a host trace in an app's own test target (docs/TRACES.md, "In the app's tests"): the
/// trace the app's `TodayPageTraceRecorder` wrote, against the rules, in-process, with a failure
/// message that lists each divergence by rule, line and time, the rules' output beside the host's.
///
/// Foundation and `TodayHost` only, so it builds for iOS test targets; the assertions for XCTest
/// (`XCTAssertHostTraceConforms`) and for Swift Testing (`expectHostTraceConforms`) are in this
/// module where those frameworks exist.
public enum HostTrace {
    /// A trace that could not be judged: unreadable, or a line the format refuses.
    public struct Unjudgeable: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Reads the trace at `url` and judges it (`toleranceMs` replaces the trace's own, as
    /// `todaysim verify-host --tolerance-ms` does).
    public static func verify(contentsOf url: URL, toleranceMs: Int64? = nil) throws -> Verdict {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw Unjudgeable(description: "cannot read the host trace \(url.path): \(error.localizedDescription)")
        }
        return try verify(data, name: url.lastPathComponent, toleranceMs: toleranceMs)
    }

    /// Judges a trace held in memory (its bytes, lines separated by `\n`).
    public static func verify(_ trace: Data, name: String = "host trace", toleranceMs: Int64? = nil) throws -> Verdict {
        var verifier = HostTraceVerifier(toleranceMs: toleranceMs)
        do throws(TraceProblem) {
            for line in trace.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                try verifier.feed(line: line)
            }
            return try verifier.finish()
        } catch {
            throw Unjudgeable(description: "\(name) is not a trace todaysim can judge: \(error.problemDetail)")
        }
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
            lines.append("  \(divergence.rule.rawValue) \(line) at \(divergence.atMs) ms, \(divergence.problem.rawValue) "
                + "\(divergence.kind.rawValue) \(divergence.type)\(divergence.deltaMs.map { " (\($0 > 0 ? "+" : "")\($0) ms)" } ?? ""): "
                + divergence.detail)
            lines.append("      rules: \(shown(divergence.expected))  |  host: \(shown(divergence.actual))")
        }
        return lines.joined(separator: "\n")
    }

    private static func shown(_ output: JSON?) -> String {
        output.map { $0.serialized() } ?? "none"
    }
}

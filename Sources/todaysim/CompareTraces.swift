import Foundation
import TodayHost

/// `todaysim compare-traces A B [--junit] [--tolerance-ms N]` (docs/TRACES.md, "iOS against
/// Android"): two recordings of one scenario compared without a server. Exit 0 identical, 1
/// differences, 2 a bad trace, traces that do not record one scenario, or usage. Both traces
/// are held while compared (a comparison aligns one with the other).
enum CompareTracesCommand {
    static func run(_ arguments: [String]) -> Int32 {
        guard let parsed = TraceFiles.arguments(arguments, command: "compare-traces", count: 2,
                                                needs: "two traces: A and B (files, or - for stdin)", help: Usage.compareTraces)
        else { return 0 }
        let comparison: HostTraceComparison
        do throws(TracePairProblem) {
            let a = try read(parsed.paths[0], side: .a, toleranceMs: parsed.tolerance)
            let b = try read(parsed.paths[1], side: .b, toleranceMs: parsed.tolerance)
            comparison = try HostTraceComparison.compare(a, b, toleranceMs: parsed.tolerance)
        } catch {
            CommandLineInterface.fail(error.problemDetail, usage: false)
        }
        if parsed.junit {
            print(comparison.junit, terminator: "")
        } else {
            print(comparison.json.serialized())
        }
        return comparison.identical ? 0 : 1
    }

    /// One side's trace read whole and judged.
    static func read(_ path: String, side: HostTraceComparison.Side, toleranceMs: Millis?) throws(TracePairProblem) -> TraceRecording {
        let input = TraceFiles.open(path)
        var reader = TraceRecording.Reader(toleranceMs: toleranceMs)
        do throws(TraceProblem) {
            try TraceFiles.feed(input) { line throws(TraceProblem) in try reader.feed(line: line) }
            return try reader.finish()
        } catch {
            throw .invalidTrace(side, error)
        }
    }
}

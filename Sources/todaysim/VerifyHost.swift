import Foundation
import TodayHost

/// `todaysim verify-host FILE|- [--junit] [--tolerance-ms N]` (docs/TRACES.md): the verdict on
/// a host trace without a server. Exit 0 the host conforms, 1 divergences, 2 a bad trace or
/// usage. The trace is read in chunks and judged line by line, never held whole.
enum VerifyHostCommand {
    static func run(_ arguments: [String]) -> Int32 {
        guard let parsed = TraceFiles.arguments(arguments, command: "verify-host", count: 1,
                                                needs: "a trace: a file, or - for stdin", help: Usage.verifyHost)
        else { return 0 }
        let input = TraceFiles.open(parsed.paths[0])
        var verifier = HostTraceVerifier(toleranceMs: parsed.tolerance)
        let verdict: Verdict
        do throws(TraceProblem) {
            try TraceFiles.feed(input) { line throws(TraceProblem) in try verifier.feed(line: line) }
            verdict = try verifier.finish()
        } catch {
            CommandLineInterface.fail("bad trace: \(error.problemDetail)", usage: false)
        }
        if parsed.junit {
            print(verdict.junit, terminator: "")
        } else {
            print(verdict.json.serialized())
        }
        return verdict.conforms ? 0 : 1
    }
}

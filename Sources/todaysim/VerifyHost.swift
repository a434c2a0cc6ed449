import Foundation
import TodayHost

/// `todaysim verify-host FILE|- [--junit] [--tolerance-ms N]` (docs/TRACES.md): the verdict on
/// a host trace without a server. Exit 0 the host conforms, 1 divergences, 2 a bad trace or
/// usage. The trace is read in chunks and judged line by line, never held whole.
enum VerifyHostCommand {
    static func run(_ arguments: [String]) -> Int32 {
        var path: String?
        var junit = false
        var tolerance: Millis?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h":
                print(Usage.verifyHost)
                return 0
            case "--junit":
                junit = true
            case "--tolerance-ms":
                guard let value = rest.popFirst() else { CommandLineInterface.fail("--tolerance-ms needs a value", usage: true) }
                guard let ms = Millis(value), (0...TraceHeader.largestToleranceMs).contains(ms) else {
                    CommandLineInterface.fail("--tolerance-ms must be 0-\(TraceHeader.largestToleranceMs), got \(value)", usage: false)
                }
                tolerance = ms
            default:
                guard path == nil, argument == "-" || !argument.hasPrefix("-") else {
                    CommandLineInterface.fail(path == nil ? "unknown flag \(argument)" : "verify-host takes one trace, got \(argument) too", usage: true)
                }
                path = argument
            }
        }
        guard let path else { CommandLineInterface.fail("verify-host needs a trace: a file, or - for stdin", usage: true) }
        let input: FileHandle
        if path == "-" {
            input = .standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: path) else {
                CommandLineInterface.fail("cannot read the trace \(path): \(String(cString: strerror(errno)))", usage: false)
            }
            input = file
        }
        var verifier = HostTraceVerifier(toleranceMs: tolerance)
        let verdict: Verdict
        do throws(TraceProblem) {
            try Self.feed(input, to: &verifier)
            verdict = try verifier.finish()
        } catch {
            CommandLineInterface.fail("bad trace: \(error.problemDetail)", usage: false)
        }
        if junit {
            print(verdict.junit, terminator: "")
        } else {
            print(verdict.json.serialized())
        }
        return verdict.conforms ? 0 : 1
    }

    /// Splits what `input` gives into lines as it comes (64 KiB at a time).
    static func feed(_ input: FileHandle, to verifier: inout HostTraceVerifier) throws(TraceProblem) {
        var lines = TraceLines(.ndjson)
        while true {
            let chunk = input.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            try lines.feed(chunk) { line throws(TraceProblem) in try verifier.feed(line: line) }
        }
        try lines.finish { line throws(TraceProblem) in try verifier.feed(line: line) }
    }
}

import Foundation
import TodayHost

/// What `verify-host` and `compare-traces` share: their arguments, and reading a trace file.
enum TraceFiles {
    struct Arguments {
        /// Files, or `-` for stdin.
        var paths: [String] = []
        var junit = false
        var tolerance: Millis?
    }

    /// `count` traces, `--junit` and `--tolerance-ms N`, or exit 2 saying what is wrong; `nil`
    /// once `--help` printed `help`. `needs`: what the command needs, for the refusal.
    static func arguments(_ arguments: [String], command: String, count: Int, needs: String, help: String) -> Arguments? {
        var parsed = Arguments()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h":
                print(help)
                return nil
            case "--junit":
                parsed.junit = true
            case "--tolerance-ms":
                parsed.tolerance = tolerance(rest.popFirst())
            default:
                guard argument == "-" || !argument.hasPrefix("-") else { CommandLineInterface.fail("unknown flag \(argument)", usage: true) }
                guard parsed.paths.count < count else {
                    CommandLineInterface.fail("\(command) takes \(count == 1 ? "one trace" : "two traces"), got \(argument) too", usage: true)
                }
                parsed.paths.append(argument)
            }
        }
        guard parsed.paths.count == count else { CommandLineInterface.fail("\(command) needs \(needs)", usage: true) }
        guard parsed.paths.filter({ $0 == "-" }).count <= 1 else { CommandLineInterface.fail("\(command) reads stdin for one trace only", usage: true) }
        return parsed
    }

    /// `--tolerance-ms N`'s value, checked (exit 2 when it is missing or out of range).
    static func tolerance(_ value: String?) -> Millis {
        guard let value else { CommandLineInterface.fail("--tolerance-ms needs a value", usage: true) }
        guard let ms = Millis(value), (0...TraceHeader.largestToleranceMs).contains(ms) else {
            CommandLineInterface.fail("--tolerance-ms must be 0-\(TraceHeader.largestToleranceMs), got \(value)", usage: false)
        }
        return ms
    }

    /// The trace at `path`, or stdin for `-`; exit 2 when it cannot be read.
    static func open(_ path: String) -> FileHandle {
        if path == "-" { return .standardInput }
        guard let file = FileHandle(forReadingAtPath: path) else {
            CommandLineInterface.fail("cannot read the trace \(path): \(String(cString: strerror(errno)))", usage: false)
        }
        return file
    }

    /// Splits what `input` gives into lines as it comes (64 KiB at a time).
    static func feed(_ input: FileHandle, line: (ArraySlice<UInt8>) throws(TraceProblem) -> Void) throws(TraceProblem) {
        var lines = TraceLines(.ndjson)
        while true {
            let chunk = input.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            try lines.feed(chunk, line: line)
        }
        try lines.finish(line: line)
    }
}

/// A whole host trace held in memory and judged (docs/TRACES.md, "iOS against Android"): what
/// the comparison of two traces reads of each. Unlike a verification, which streams, a
/// comparison aligns one trace with the other, so each is kept: its header, creation, inputs
/// and outputs, and its own verdict with the rule of every judged output line.
package struct TraceRecording: Sendable {
    package var header: TraceHeader
    package var creation: SessionConfig
    /// In line order.
    package var inputs: [TraceInput]
    /// Every output line (of every kind, judged or not: ids bind by them), in line order.
    package var outputs: [TraceOutput]
    /// Where recording stopped.
    package var endMs: Millis
    /// The trace judged against the rules on its own.
    package var verdict: Verdict
    /// The rule of each judged output line, and whether `verdict` lists it.
    package var lineJudgements: [Int: LineJudgement]

    /// Reads a trace one line at a time (as `HostTraceVerifier` does), judging it as it goes.
    package struct Reader: Sendable {
        private var reader = TraceReader()
        private var verifier: HostTraceVerifier
        private var inputs: [TraceInput] = []
        private var outputs: [TraceOutput] = []

        /// `toleranceMs`: replaces the trace's own, as `verify-host --tolerance-ms` does.
        package init(toleranceMs: Millis? = nil) {
            verifier = HostTraceVerifier(toleranceMs: toleranceMs)
            verifier.lineJudgements = [:]
        }

        /// One line of the trace, without its `\n`.
        package mutating func feed(line: some Collection<UInt8>) throws(TraceProblem) {
            let bytes = Array(line)
            switch try reader.read(bytes) {
            case let .input(input): inputs.append(input)
            case let .output(output): outputs.append(output)
            case .header, .creation, .end, .skipped: break
            }
            try verifier.feed(line: bytes)
        }

        /// After the last line.
        package mutating func finish() throws(TraceProblem) -> TraceRecording {
            let endMs = try reader.endMs()
            let verdict = try verifier.finish()
            return TraceRecording(header: reader.header!, creation: reader.creation!, inputs: inputs, outputs: outputs, endMs: endMs,
                                  verdict: verdict, lineJudgements: verifier.lineJudgements ?? [:])
        }
    }

    /// A trace given whole: NDJSON text.
    package static func read(_ text: String, toleranceMs: Millis? = nil) throws(TraceProblem) -> TraceRecording {
        var reader = Reader(toleranceMs: toleranceMs)
        var lines = TraceLines(.ndjson)
        try lines.feed(Array(text.utf8)) { line throws(TraceProblem) in try reader.feed(line: line) }
        try lines.finish { line throws(TraceProblem) in try reader.feed(line: line) }
        return try reader.finish()
    }

    /// How many inputs come before `line`: the input an output follows (`0`: the creation).
    func inputsBefore(line: Int) -> Int {
        var low = 0, high = inputs.count
        while low < high {
            let middle = (low + high) / 2
            if inputs[middle].line < line { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

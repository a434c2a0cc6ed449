/// Splits a trace into its lines as its bytes arrive, in chunks of any size: the lines of
/// NDJSON (`application/x-ndjson`, what a recorder writes), or the elements of one JSON array
/// (`application/json`: element N−1 is line N). Only the line being read is held.
package struct TraceLines: Sendable {
    package enum Format: Sendable {
        case ndjson
        case jsonArray
    }

    private let format: Format
    private var carry: [UInt8] = []
    /// JSON array state: before the `[`, inside it, or after its `]`.
    private enum Place { case before, inside, after }
    private var place = Place.before
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// Elements of the array read so far (the line number of the next one, minus one).
    private var elements = 0

    package init(_ format: Format) {
        self.format = format
    }

    /// Gives `line` each complete line (without its `\n`, or an array element) in `bytes`.
    package mutating func feed(_ bytes: some Collection<UInt8>,
                              line: (ArraySlice<UInt8>) throws(TraceProblem) -> Void) throws(TraceProblem) {
        switch format {
        case .ndjson:
            carry.append(contentsOf: bytes)
            var start = carry.startIndex
            while let newline = carry[start...].firstIndex(of: UInt8(ascii: "\n")) {
                try line(carry[start..<newline])
                start = newline + 1
            }
            carry.removeFirst(start)
        case .jsonArray:
            for byte in bytes { try take(byte, line: line) }
        }
    }

    /// After the last byte: the line without a `\n` after it, if any.
    package mutating func finish(line: (ArraySlice<UInt8>) throws(TraceProblem) -> Void) throws(TraceProblem) {
        switch format {
        case .ndjson:
            if !carry.isEmpty { try line(carry[...]) }
            carry = []
        case .jsonArray:
            guard place == .after else {
                throw TraceProblem(line: elements + 1, place == .before ? "a JSON trace is one array of lines, and this body holds none"
                                                                       : "the JSON array of lines ends before its closing ]")
            }
        }
    }

    private mutating func take(_ byte: UInt8, line: (ArraySlice<UInt8>) throws(TraceProblem) -> Void) throws(TraceProblem) {
        switch place {
        case .before:
            if Self.isSpace(byte) { return }
            guard byte == UInt8(ascii: "[") else {
                throw TraceProblem(line: 1, "a JSON trace is one array of lines (element N-1 is line N); this body does not begin with [")
            }
            place = .inside
        case .after:
            guard Self.isSpace(byte) else { throw TraceProblem(line: elements, "something follows the JSON array of lines") }
        case .inside:
            if inString {
                carry.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                return
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                carry.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                carry.append(byte)
            case UInt8(ascii: "}"):
                // Inside an element (a stray one stays in it, for the line's parser to refuse).
                depth = max(0, depth - 1)
                carry.append(byte)
            case UInt8(ascii: "]") where depth > 0:
                depth -= 1
                carry.append(byte)
            case UInt8(ascii: ",") where depth > 0:
                carry.append(byte)
            case UInt8(ascii: ","), UInt8(ascii: "]"):
                // The end of an element: at depth 0 a `,` or the array's own `]`.
                let ended = byte == UInt8(ascii: "]")
                let element = carry.drop(while: Self.isSpace)
                if element.isEmpty {
                    guard ended, elements == 0 else { throw TraceProblem(line: elements + 1, "line \(elements + 1) of the JSON array is empty") }
                } else {
                    elements += 1
                    try line(carry[...])
                }
                carry = []
                if ended { place = .after }
            default:
                carry.append(byte)
            }
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

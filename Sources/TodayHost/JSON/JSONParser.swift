/// Why a text is not JSON, with the byte offset where reading stopped.
package struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    package var offset: Int
    package var problem: String

    package var description: String { "\(problem) at byte \(offset)" }
}

extension JSON {
    /// Parses a complete JSON text (RFC 8259). Object member order is kept.
    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSON {
        var bytes = Array(text.utf8)
        return try parse(bytes: &bytes)
    }

    package static func parse(bytes: [UInt8]) throws(JSONSyntaxError) -> JSON {
        var copy = bytes
        return try parse(bytes: &copy)
    }

    private static func parse(bytes: inout [UInt8]) throws(JSONSyntaxError) -> JSON {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw parser.error("unexpected text after the value")
        }
        return value
    }
}

/// A recursive-descent reader over UTF-8 bytes.
private struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    /// Deeper nesting than any bridge message has is refused rather than risking the stack.
    static let maximumDepth = 512

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ problem: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: index, problem: problem)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // Only containers nest: the depth counts open arrays and objects.
            guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
            return bytes[index] == UInt8(ascii: "{") ? try parseObject(depth: depth) : try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: String) throws(JSONSyntaxError) {
        for byte in literal.utf8 {
            guard index < bytes.count else { throw error("unexpected end of input") }
            guard bytes[index] == byte else { throw error("invalid literal") }
            index += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSON {
        index += 1
        var members: [(String, JSON)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth + 1)
            members.append((key, value))
            if try endOfElement(UInt8(ascii: "}")) { return .object(members) }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSON {
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            if try endOfElement(UInt8(ascii: "]")) { return .array(elements) }
        }
    }

    /// After a member or element: `true` at `closing` (consumed: the container ends), `false`
    /// after a comma (another follows).
    mutating func endOfElement(_ closing: UInt8) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of input") }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return false
        }
        guard bytes[index] == closing else { throw error("expected ',' or '\(Character(Unicode.Scalar(closing)))'") }
        index += 1
        return true
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var escaped = false
        var runStart = index
        func flushRun(_ parser: JSONParser, upTo end: Int, into scalars: inout String.UnicodeScalarView) {
            guard end > runStart else { return }
            scalars.append(contentsOf: String(decoding: parser.bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                // No escape met (nearly every string): the bytes, already checked, are the text.
                guard escaped else {
                    let text = String(decoding: bytes[runStart..<index], as: UTF8.self)
                    index += 1
                    return text
                }
                flushRun(self, upTo: index, into: &scalars)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flushRun(self, upTo: index, into: &scalars)
                index += 1
                scalars.append(try parseEscape())
                escaped = true
                runStart = index
            case 0x00..<0x20:
                throw error("control character in string")
            case 0x80...:
                try skipUTF8Sequence()
            default:
                index += 1
            }
        }
    }

    /// Checks one multi-byte UTF-8 sequence so invalid text is refused, not silently replaced.
    mutating func skipUTF8Sequence() throws(JSONSyntaxError) {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: throw error("invalid UTF-8")
        }
        guard index + length <= bytes.count else { throw error("invalid UTF-8") }
        for offset in 1..<length where bytes[index + offset] & 0xC0 != 0x80 {
            throw error("invalid UTF-8")
        }
        let second = bytes[index + 1]
        if (lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F)
            || (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)
        {
            throw error("invalid UTF-8")
        }
        index += length
    }

    mutating func parseEscape() throws(JSONSyntaxError) -> Unicode.Scalar {
        guard index < bytes.count else { throw error("unterminated escape") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let high = try parseHex4()
            if (0xD800...0xDBFF).contains(high) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("lone surrogate") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate") }
                let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                return Unicode.Scalar(value)!
            }
            guard let scalar = Unicode.Scalar(high) else { throw error("lone surrogate") }
            return scalar
        default:
            throw error("invalid escape")
        }
    }

    mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSON {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return .double(value)
    }

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

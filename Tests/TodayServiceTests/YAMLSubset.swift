import TodayHost

/// Reads the YAML the OpenAPI document is written in into `JSON`, for tests that check the
/// document's schemas against the engine (the package has no YAML library, and the document is
/// kept to a plain subset): block mappings and sequences, flow `[…]` and `{…}` (over several
/// lines too), plain, single- and double-quoted scalars, `|` and `>` block scalars with their
/// chomping, `#` comments. Anything else — anchors, tags, several documents, a plain scalar
/// over several lines — is an error naming the line, never a silent misreading.
struct YAMLSubset {
    struct Failure: Error, CustomStringConvertible {
        var line: Int
        var problem: String
        var description: String { "YAML line \(line): \(problem)" }
    }

    private struct Line {
        var number: Int
        var indent: Int
        /// The text after the indentation, comment and trailing blanks removed (for block
        /// scalars, `raw` is what counts).
        var text: String
        var raw: Substring
    }

    private var lines: [Line] = []
    private var all: [Substring]
    private var position = 0

    static func parse(_ text: String) throws -> JSON {
        var reader = YAMLSubset(all: text.split(separator: "\n", omittingEmptySubsequences: false))
        reader.lines = reader.all.enumerated().compactMap { index, raw in
            let indent = raw.prefix(while: { $0 == " " }).count
            let text = Self.uncommented(raw.dropFirst(indent))
            return text.isEmpty ? nil : Line(number: index + 1, indent: indent, text: text, raw: raw)
        }
        guard let first = reader.lines.first else { return .null }
        let value = try reader.node(indent: first.indent)
        if reader.position < reader.lines.count {
            let line = reader.lines[reader.position]
            throw Failure(line: line.number, problem: "unexpected indentation: \(line.text)")
        }
        return value
    }

    private init(all: [Substring]) { self.all = all }

    /// The line without its comment: a `#` at the start or after a blank, outside quotes.
    private static func uncommented(_ text: Substring) -> String {
        var quote: Character?
        var previous: Character = " "
        var end = text.endIndex
        for index in text.indices {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"", previous == " " || previous == "[" || previous == "{" || previous == "," {
                quote = character
            } else if character == "#", previous == " " || previous == "\t" {
                end = index
                break
            }
            previous = character
        }
        var result = String(text[..<end])
        while result.last == " " || result.last == "\t" || result.last == "\r" { result.removeLast() }
        return result
    }

    private func failure(_ problem: String) -> Failure {
        Failure(line: position < lines.count ? lines[position].number : (lines.last?.number ?? 0), problem: problem)
    }

    /// The block node whose lines start at `indent`.
    private mutating func node(indent: Int) throws -> JSON {
        guard position < lines.count, lines[position].indent == indent else { throw failure("expected a node at indentation \(indent)") }
        let text = lines[position].text
        if text == "-" || text.hasPrefix("- ") { return try sequence(indent: indent) }
        return try mapping(indent: indent)
    }

    private mutating func sequence(indent: Int) throws -> JSON {
        var items: [JSON] = []
        while position < lines.count, lines[position].indent == indent {
            let line = lines[position]
            guard line.text == "-" || line.text.hasPrefix("- ") else { throw failure("a mapping key among sequence items: \(line.text)") }
            let rest = String(line.text.dropFirst(1).drop(while: { $0 == " " }))
            if rest.isEmpty {
                position += 1
                guard position < lines.count, lines[position].indent > indent else { items.append(.null); continue }
                items.append(try node(indent: lines[position].indent))
            } else if Self.keySplit(rest) != nil, !rest.hasPrefix("[") && !rest.hasPrefix("{") {
                // `- key: value`: a mapping whose first key sits where `rest` starts.
                let inner = indent + (line.text.count - rest.count)
                lines[position].indent = inner
                lines[position].text = rest
                items.append(try mapping(indent: inner))
            } else {
                items.append(try inlineValue(rest, owner: indent))
            }
        }
        return .array(items)
    }

    private mutating func mapping(indent: Int) throws -> JSON {
        var members: [(String, JSON)] = []
        while position < lines.count, lines[position].indent == indent {
            let line = lines[position]
            guard let (rawKey, rest) = Self.keySplit(line.text) else { throw failure("not a `key: value` line: \(line.text)") }
            let key = try Self.scalarText(rawKey, line: line.number)
            if members.contains(where: { $0.0 == key }) { throw failure("key `\(key)` repeats") }
            if rest.isEmpty {
                position += 1
                if position < lines.count, lines[position].indent > indent {
                    members.append((key, try node(indent: lines[position].indent)))
                } else {
                    members.append((key, .null))
                }
            } else if rest.hasPrefix("|") || rest.hasPrefix(">") {
                members.append((key, .string(try blockScalar(header: rest, owner: indent))))
            } else {
                members.append((key, try inlineValue(rest, owner: indent)))
            }
        }
        return .object(members)
    }

    /// `key` and what follows `: ` (empty for `key:`), or nil when the line is no mapping entry.
    private static func keySplit(_ text: String) -> (String, String)? {
        var quote: Character?
        let characters = Array(text)
        if let first = characters.first, first == "'" || first == "\"" { quote = first }
        var index = quote == nil ? 0 : 1
        while index < characters.count {
            let character = characters[index]
            if let open = quote {
                if character == open {
                    if open == "'", index + 1 < characters.count, characters[index + 1] == "'" {
                        index += 2
                        continue
                    }
                    quote = nil
                } else if open == "\"", character == "\\" {
                    index += 1
                }
            } else if character == ":", index + 1 == characters.count || characters[index + 1] == " " {
                let key = String(characters[..<index])
                let rest = String(characters[(index + 1)...]).drop(while: { $0 == " " })
                return key.isEmpty ? nil : (key, String(rest))
            }
            index += 1
        }
        return nil
    }

    /// A value on the line of its key or dash: a flow collection (read on while its brackets
    /// are open), a quoted scalar or a plain one. The current line is consumed.
    private mutating func inlineValue(_ text: String, owner: Int) throws -> JSON {
        let number = lines[position].number
        position += 1
        if text.hasPrefix("[") || text.hasPrefix("{") {
            var source = text
            var flow = FlowReader(text: source, line: number)
            while !flow.isBalanced {
                guard position < lines.count, lines[position].indent > owner else {
                    throw Failure(line: number, problem: "a flow collection is never closed")
                }
                source += " " + lines[position].text
                position += 1
                flow = FlowReader(text: source, line: number)
            }
            return try flow.read()
        }
        if position < lines.count, lines[position].indent > owner {
            throw Failure(line: number, problem: "a scalar continued on the next line is outside the subset")
        }
        if text.hasPrefix("'") || text.hasPrefix("\"") { return .string(try Self.scalarText(text, line: number)) }
        return Self.plain(text)
    }

    /// A `|` or `>` block scalar (`-` strips the final newline, `+` keeps every one).
    private mutating func blockScalar(header: String, owner: Int) throws -> String {
        let number = lines[position].number
        let folded = header.hasPrefix(">")
        let chomping = header.dropFirst().first
        guard header.count == 1 || (header.count == 2 && (chomping == "-" || chomping == "+")) else {
            throw Failure(line: number, problem: "block scalar header `\(header)` is outside the subset")
        }
        // The raw lines (blank ones too) up to the next one indented as `owner` or less; `all`
        // is 0-based, so the line after the header is `all[number]`.
        var body: [Substring] = []
        var scan = number
        while scan < all.count {
            let raw = all[scan]
            let blank = raw.allSatisfy { $0 == " " || $0 == "\r" }
            if !blank, raw.prefix(while: { $0 == " " }).count <= owner { break }
            body.append(raw)
            scan += 1
        }
        while position < lines.count, lines[position].number <= scan { position += 1 }
        let contentIndent = body.first { !$0.allSatisfy { $0 == " " || $0 == "\r" } }.map { $0.prefix(while: { $0 == " " }).count } ?? 0
        var trailing = 0
        while let last = body.last, last.allSatisfy({ $0 == " " || $0 == "\r" }) {
            body.removeLast()
            trailing += 1
        }
        let content = body.map { $0.count > contentIndent ? String($0.dropFirst(contentIndent)) : "" }
        var text: String
        if folded {
            text = ""
            for (index, line) in content.enumerated() {
                if index > 0 { text += (line.isEmpty || content[index - 1].isEmpty || line.hasPrefix(" ")) ? "\n" : " " }
                text += line
            }
        } else {
            text = content.joined(separator: "\n")
        }
        switch chomping {
        case "-": return text
        case "+": return text + String(repeating: "\n", count: trailing + 1)
        default: return content.isEmpty ? "" : text + "\n"
        }
    }

    /// A key or scalar: quotes removed and escapes read.
    static func scalarText(_ text: String, line: Int) throws -> String {
        guard let first = text.first, first == "'" || first == "\"" else { return text }
        guard text.count >= 2, text.last == first else { throw Failure(line: line, problem: "an unclosed quote: \(text)") }
        let inner = String(text.dropFirst().dropLast())
        if first == "'" { return inner.replacingOccurrences(of: "''", with: "'") }
        var result = ""
        var characters = inner.makeIterator()
        while let character = characters.next() {
            guard character == "\\" else {
                result.append(character)
                continue
            }
            switch characters.next() {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "\\": result.append("\\")
            case "\"": result.append("\"")
            case "/": result.append("/")
            case "x", "u":
                throw Failure(line: line, problem: "a numeric escape in a double-quoted scalar is outside the subset")
            default: throw Failure(line: line, problem: "an unknown escape in \(text)")
            }
        }
        return result
    }

    /// A plain scalar as YAML 1.2's core schema reads it.
    static func plain(_ text: String) -> JSON {
        switch text {
        case "null", "~", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let integer = Int64(text) { return .int(integer) }
        if text.contains(where: { $0.isNumber }), text.allSatisfy({ "0123456789.eE+-".contains($0) }), let number = Double(text) {
            return .double(number)
        }
        return .string(text)
    }
}

/// A flow collection (`[a, b]`, `{k: v}`, nested), as one string.
private struct FlowReader {
    let characters: [Character]
    let line: Int
    var index = 0

    init(text: String, line: Int) {
        characters = Array(text)
        self.line = line
    }

    /// Whether the brackets close (outside quotes).
    var isBalanced: Bool {
        var depth = 0
        var quote: Character?
        for character in characters {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case "[", "{": depth += 1
            case "]", "}": depth -= 1
            default: break
            }
        }
        return depth <= 0
    }

    mutating func read() throws -> JSON {
        let value = try value()
        skipBlanks()
        guard index == characters.count else { throw problem("text after a flow collection") }
        return value
    }

    private func problem(_ text: String) -> YAMLSubset.Failure { YAMLSubset.Failure(line: line, problem: "\(text) at column \(index + 1)") }

    private mutating func skipBlanks() {
        while index < characters.count, characters[index] == " " { index += 1 }
    }

    private mutating func value() throws -> JSON {
        skipBlanks()
        guard index < characters.count else { throw problem("a missing value") }
        switch characters[index] {
        case "[":
            var items: [JSON] = []
            try list(closing: "]") { reader in items.append(try reader.value()) }
            return .array(items)
        case "{":
            var members: [(String, JSON)] = []
            try list(closing: "}") { reader in
                reader.skipBlanks()
                guard case let .string(key) = try reader.scalar(isKey: true) else { throw reader.problem("a key that is no string") }
                reader.skipBlanks()
                guard reader.index < reader.characters.count, reader.characters[reader.index] == ":" else {
                    throw reader.problem("expected : after a key")
                }
                reader.index += 1
                members.append((key, try reader.value()))
            }
            return .object(members)
        default:
            return try scalar(isKey: false)
        }
    }

    /// The items of a `[…]` or `{…}` from its opening bracket: each read by `item`, separated
    /// by commas, up to `closing`.
    private mutating func list(closing: Character, item: (inout FlowReader) throws -> Void) throws {
        index += 1
        skipBlanks()
        if index < characters.count, characters[index] == closing {
            index += 1
            return
        }
        while true {
            try item(&self)
            skipBlanks()
            guard index < characters.count else { throw problem("an unclosed collection") }
            if characters[index] == closing {
                index += 1
                return
            }
            guard characters[index] == "," else { throw problem("expected , or \(closing)") }
            index += 1
        }
    }

    private mutating func scalar(isKey: Bool) throws -> JSON {
        let start = index
        if characters[index] == "'" || characters[index] == "\"" {
            let quote = characters[index]
            index += 1
            while index < characters.count {
                if characters[index] == quote {
                    if quote == "'", index + 1 < characters.count, characters[index + 1] == "'" {
                        index += 2
                        continue
                    }
                    break
                }
                if quote == "\"", characters[index] == "\\" { index += 1 }
                index += 1
            }
            guard index < characters.count else { throw problem("an unclosed quote") }
            index += 1
            return .string(try YAMLSubset.scalarText(String(characters[start..<index]), line: line))
        }
        while index < characters.count {
            let character = characters[index]
            if character == "," || character == "]" || character == "}" { break }
            if isKey, character == ":" { break }
            if character == ":", index + 1 < characters.count, characters[index + 1] == " " || characters[index + 1] == "," { break }
            index += 1
        }
        var text = String(characters[start..<index])
        while text.last == " " { text.removeLast() }
        return isKey ? .string(text) : YAMLSubset.plain(text)
    }
}

import Foundation

/// The tool of Plugins/EmbedFiles: writes a Swift source declaring one file's bytes.
///
///   embed-file INPUT OUTPUT.swift
///
/// `dashboard.html` becomes `let dashboardHtml: [UInt8]`, internal to the target that holds the
/// file. The bytes are a string literal, not an array literal: for the ~100 KB OpenAPI document
/// swiftc takes 0.4 s on the literal and 17 s (30 s with -O, 0.7 GB) on `[0x6f, …]`. A string
/// literal holds any UTF-8 text exactly (Swift never normalizes it), so a file that is not
/// UTF-8 is refused rather than altered.
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: embed-file INPUT OUTPUT.swift\n".utf8))
    exit(2)
}
let input = URL(fileURLWithPath: arguments[1])
let output = URL(fileURLWithPath: arguments[2])
guard let data = FileManager.default.contents(atPath: input.path), let text = String(validating: data, as: UTF8.self) else {
    FileHandle.standardError.write(Data("embed-file: \(input.path) is unreadable or not UTF-8\n".utf8))
    exit(1)
}

/// `bridge.js` → `bridgeJs`: the name's letters and digits, each later word capitalized.
func identifier(for name: String) -> String {
    let words = name.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
    let camel = words.enumerated().map { $0.offset == 0 ? $0.element.lowercased() : $0.element.capitalized }.joined()
    return camel.first?.isNumber == false ? camel : "file" + camel
}

/// Lines for a multi-line literal whose closing delimiter sits in column 0, so nothing is
/// stripped: every backslash and quote escaped, and control characters (a CR above all, which
/// the compiler would read as a line end) as `\u{…}`.
func literalBody(_ text: String) -> String {
    var body = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": body += "\\\\"
        case "\"": body += "\\\""
        case "\n": body += "\n"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            body += "\\u{\(String(scalar.value, radix: 16))}"
        default: body.unicodeScalars.append(scalar)
        }
    }
    return body
}

let source = """
// Generated at build time by Plugins/EmbedFiles from \(input.lastPathComponent); edit that file, not this one.
let \(identifier(for: input.lastPathComponent)): [UInt8] = {
    let text: StaticString = \"\"\"
\(literalBody(text))
\"\"\"
    return text.withUTF8Buffer { Array($0) }
}()

"""
do {
    try Data(source.utf8).write(to: output, options: .atomic)
} catch {
    FileHandle.standardError.write(Data("embed-file: cannot write \(output.path): \(error)\n".utf8))
    exit(1)
}

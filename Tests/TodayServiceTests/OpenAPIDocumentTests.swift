import Foundation
import Testing
@testable import TodayServer
import TodayOpenAPI
import TodayStore

/// The OpenAPI document (`OpenAPI/todaysim.yaml`, read from the repository; `EndpointTests` checks
/// the server serves exactly that file) against the server's real route table.
///
/// The document keeps a formatting convention this test relies on: under the top-level
/// `paths:` key every path is indented exactly two spaces (`  /v1/sessions/{id}:`) and every
/// operation exactly four (`    get:`); nothing else sits at those two levels inside `paths:`.
@Suite struct OpenAPIDocumentTests {
    /// Every problem `code` of the v1 contract.
    static let contractCodes: Set<String> = [
        "invalid_json", "invalid_field", "unknown_input", "unauthorized", "session_not_found", "not_found",
        "method_not_allowed", "session_exists", "session_closed", "precondition_failed", "idempotency_conflict",
        "clock_not_virtual", "payload_too_large", "internal",
    ]
    /// Codes the project added to the contract's table (extended, never renamed).
    static let extensionCodes: Set<String> = ["unsupported_media_type", "shutting_down", "malformed_request",
                                                  "unsupported_transfer_encoding", "too_many_connections", "insufficient_storage", "storage_unavailable",
                                                  "invalid_trace",  // a bad host trace (issue 21, docs/TRACES.md)
                                                  "judges_busy",  // a trace that waited too long for a judge (issue 33)
                                                  "traces_not_comparable"]  // two traces whose inputs do not align (issue 44)

    static let httpMethods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    struct Operation: Hashable, CustomStringConvertible {
        var method: String
        var path: String
        var description: String { "\(method) \(path)" }
    }

    @Test func documentedOperationsAreExactlyTheRoutes() throws {
        let service = TodayService(store: try SessionStore(path: ":memory:"), scheduler: nil, log: RequestLog(enabled: false))
        let routes = service.router.routes.map { Operation(method: $0.method.uppercased(), path: $0.template) }
        let served = Set(routes)
        #expect(served.count == routes.count, "the route table lists an operation twice")

        let (documented, problems) = Self.documentedOperations(in: try Self.document())
        #expect(problems.isEmpty, "paths: breaks the indentation convention:\n\(problems.joined(separator: "\n"))")
        #expect(!documented.isEmpty, "no operations found under paths:")

        let undocumented = served.subtracting(documented).map(\.description).sorted()
        let unserved = documented.subtracting(served).map(\.description).sorted()
        #expect(undocumented.isEmpty, "routes missing from the document: \(undocumented)")
        #expect(unserved.isEmpty, "documented operations the server does not have: \(unserved)")
    }

    /// Issue 13, item 6: the repository is Apache-2.0 licensed, and the contract says so.
    @Test func theLicenceIsApache2InTheRepositoryAndTheDocument() throws {
        let licence = String(decoding: try RepositoryFiles.bytes("LICENSE"), as: UTF8.self)
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
        let text = String(decoding: try RepositoryFiles.bytes("OpenAPI/todaysim.yaml"), as: UTF8.self)
        #expect(text.contains("  license:\n    name: Apache License 2.0\n    identifier: Apache-2.0\n"))
    }

    @Test func documentIsOpenAPI31WithContractErrorCodes() throws {
        let text = try Self.document()
        #expect(text.hasPrefix("openapi: 3.1"), "the document must start with `openapi: 3.1`")

        let codes = Self.problemCodes(in: text)
        #expect(codes.contains("invalid_field") && codes.contains("session_not_found"),
                "found too few problem codes to trust the scan: \(codes.sorted())")
        let unknown = codes.subtracting(Self.contractCodes).subtracting(Self.extensionCodes).sorted()
        #expect(unknown.isEmpty, "problem codes neither in the v1 contract nor a known extension: \(unknown)")
    }

    /// Issue 35, item 4: the document's `info.version` is the repository's VERSION (the binary
    /// embeds that file; `/openapi.yaml` serves this document as it is).
    @Test func infoVersionIsTheRepositoryVersion() throws {
        let written = String(decoding: try RepositoryFiles.bytes("VERSION"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let info = try #require(try Self.document().components(separatedBy: "\ninfo:\n").dropFirst().first)
        let version = info.split(separator: "\n").first { $0.hasPrefix("  version: ") }.map { $0.dropFirst("  version: ".count) }
        #expect(version.map(String.init) == written)
        #expect(TodaysimVersion.string == written)
    }

    static func document() throws -> String {
        String(decoding: try RepositoryFiles.bytes("OpenAPI/todaysim.yaml"), as: UTF8.self)
    }

    // MARK: Reading the YAML by its conventions

    static func indentation(_ line: Substring) -> Int {
        line.prefix(while: { $0 == " " }).count
    }

    /// The key of a `key:` line with nothing after the colon, unquoted.
    static func key(_ line: Substring) -> String? {
        let trimmed = line.drop(while: { $0 == " " })
        guard trimmed.hasSuffix(":") else { return nil }
        var name = String(trimmed.dropLast())
        if name.count >= 2, let first = name.first, first == "'" || first == "\"", name.last == first {
            name = String(name.dropFirst().dropLast())
        }
        return name
    }

    static func isBlankOrComment(_ line: Substring) -> Bool {
        let trimmed = line.drop(while: { $0 == " " })
        return trimmed.isEmpty || trimmed.hasPrefix("#")
    }

    /// (METHOD, path) under `paths:`, and every line that breaks the convention.
    static func documentedOperations(in text: String) -> (Set<Operation>, [String]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == "paths:" }) else { return ([], ["no top-level `paths:` key"]) }
        var operations = Set<Operation>()
        var problems: [String] = []
        var paths: [String] = []
        var currentPath: String?
        for line in lines[(start + 1)...] {
            if isBlankOrComment(line) { continue }
            let indent = indentation(line)
            if indent == 0 { break }
            switch indent {
            case 2:
                guard let path = key(line), path.hasPrefix("/") else {
                    problems.append("not a path at 2 spaces: \(line)")
                    currentPath = nil
                    continue
                }
                if paths.contains(path) { problems.append("path listed twice: \(path)") }
                paths.append(path)
                currentPath = path
            case 4:
                guard let method = key(line), httpMethods.contains(method) else {
                    problems.append("not an operation at 4 spaces: \(line)")
                    continue
                }
                guard let currentPath else {
                    problems.append("operation outside a path: \(line)")
                    continue
                }
                let operation = Operation(method: method.uppercased(), path: currentPath)
                if operations.contains(operation) { problems.append("operation listed twice: \(operation)") }
                operations.insert(operation)
            case ..<6:
                problems.append("unexpected indentation \(indent): \(line)")
            default:
                continue
            }
        }
        return (operations, problems)
    }

    /// Every problem `code` the document mentions: in any `application/problem+json` block
    /// (schema `enum`s and examples) and in the `Problem` schema. A timeline entry's `code`
    /// (a violation's rule id) is not a problem code and is outside those blocks.
    static func problemCodes(in text: String) -> Set<String> {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var codes = Set<String>()
        var blockIndent: Int?
        var codeKeyIndent: Int?
        for line in lines {
            if isBlankOrComment(line) { continue }
            let indent = indentation(line)
            let trimmed = String(line.drop(while: { $0 == " " }))
            if let open = blockIndent, indent <= open { blockIndent = nil }
            if let open = codeKeyIndent, indent <= open { codeKeyIndent = nil }
            if blockIndent == nil {
                if trimmed == "application/problem+json:" || (trimmed == "Problem:" && indent == 4) { blockIndent = indent }
                continue
            }
            if trimmed == "code:" {
                codeKeyIndent = indent
            } else if trimmed.hasPrefix("code: ") {
                codes.insert(scalar(trimmed.dropFirst("code: ".count)))
            } else if codeKeyIndent != nil, trimmed.hasPrefix("enum:") {
                let list = scalar(trimmed.dropFirst("enum:".count), trimming: " []")
                for item in list.split(separator: ",") where !scalar(item).isEmpty {
                    codes.insert(scalar(item))
                }
            } else if codeKeyIndent != nil, trimmed.hasPrefix("- ") {
                codes.insert(scalar(trimmed.dropFirst(2)))
            }
        }
        return codes
    }

    static func scalar(_ text: some StringProtocol, trimming characters: String = " '\"") -> String {
        let set = Set(characters)
        return String(text.drop(while: { set.contains($0) }).reversed().drop(while: { set.contains($0) }).reversed())
    }
}

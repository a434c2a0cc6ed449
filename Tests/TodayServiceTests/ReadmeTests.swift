import Foundation
import Testing

/// The README and docs/ as a stranger reads them (issue 13, item 7; issue 20, item 6): the README
/// is a short front door, docs/README.md indexes every document, the layout table
/// (docs/LAYOUT.md) names every folder of the repository, and no shell example, wherever it
/// lives, writes into the clone.
@Suite struct ReadmeTests {
    static func text(_ path: String) throws -> String {
        String(decoding: try RepositoryFiles.bytes(path), as: UTF8.self)
    }

    /// The Markdown files under docs/ (folders included), as repository paths, sorted.
    static func docs() throws -> [String] {
        let folder = RepositoryFiles.root.appendingPathComponent("docs")
        let all = try #require(FileManager.default.subpaths(atPath: folder.path))
        return all.filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }.sorted()
    }

    /// The README, then every document under docs/: where the checked examples live.
    static func documents() throws -> [(path: String, text: String)] {
        try (["README.md"] + docs()).map { ($0, try text($0)) }
    }

    /// Folders directly under `path` (the repository root when empty).
    static func folders(under path: String) throws -> [String] {
        let url = path.isEmpty ? RepositoryFiles.root : RepositoryFiles.root.appendingPathComponent(path)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder)
                && isFolder.boolValue
        }.map { path.isEmpty ? $0 : "\(path)/\($0)" }.sorted()
    }

    /// The front door stays one a newcomer reads in five minutes; the rest is one click away.
    @Test func theReadmeIsShortAndDocsReadmeIndexesEveryDocument() throws {
        let readme = try Self.text("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 160, "the README has \(lines) lines: move the new part into docs/")
        #expect(readme.contains("](docs/README.md)"), "the README links the docs index")
        let index = try Self.text("docs/README.md")
        let documents = try Self.docs().filter { $0 != "docs/README.md" }
        #expect(documents.count >= 10, "\(documents)")
        for document in documents {
            let link = "](" + document.dropFirst("docs/".count) + ")"
            #expect(index.contains(link), "docs/README.md does not link \(document)")
        }
    }

    @Test func theLayoutTableNamesEveryFolderAndTestTarget() throws {
        let layout = try Self.text("docs/LAYOUT.md")
        let table = layout.split(separator: "\n").filter { $0.hasPrefix("|") }.joined(separator: "\n")
        #expect(!table.isEmpty, "no layout table in docs/LAYOUT.md")
        // Folders a clone does not hold (build output, local databases) are not the layout.
        let gitignore = String(decoding: try RepositoryFiles.bytes(".gitignore"), as: UTF8.self)
        let ignored = Set(gitignore.split(separator: "\n").filter { $0.hasSuffix("/") }.map { String($0.dropLast()) } + [".git"])
        let topLevel = try Self.folders(under: "").filter { !ignored.contains($0) }
        #expect(topLevel.contains("Sources") && topLevel.contains("docs") && topLevel.contains(".ci"), "\(topLevel)")
        let inside = try ["Sources", "Tests", "Scripts"].flatMap { try Self.folders(under: $0) }
            .filter { !ignored.contains(String($0.split(separator: "/").last!)) }
        #expect(inside.contains("Scripts/lib") && inside.contains("Tests/TodayStoreTests"), "\(inside)")
        for folder in topLevel + inside {
            #expect(table.contains("`\(folder)`") || table.contains("`\(folder)/"), "the layout table does not name \(folder)")
        }
        let package = String(decoding: try RepositoryFiles.bytes("Package.swift"), as: UTF8.self)
        let testTargets = package.matches(of: #/\.testTarget\(name: "([^"]+)"/#).map { String($0.1) }
        #expect(testTargets.count == 5, "\(testTargets)")
        for target in testTargets { #expect(table.contains("`Tests/\(target)`"), "the layout table does not name test target \(target)") }
    }

    /// Run from a clone, an example's `> file` or `curl -o file` must not leave files in it: output goes to
    /// /dev/null or a temporary folder. That holds for the README's examples and for every document's.
    @Test func shellExamplesRedirectOnlyOutsideTheClone() throws {
        var blocks: [(path: String, block: String)] = []
        for document in try Self.documents() {
            blocks += document.text.components(separatedBy: "```").enumerated()
                .filter { $0.offset % 2 == 1 && $0.element.hasPrefix("sh\n") }.map { (document.path, $0.element) }
        }
        #expect(blocks.count >= 10, "the sh blocks of the README and docs/ were not found")
        var targets: [(path: String, target: String)] = []
        for (path, block) in blocks {
            // Single-quoted text (JSON bodies, jq filters) and comments are not redirections.
            let code = block.replacing(#/'[^']*'/#, with: "").split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }.joined(separator: "\n")
            targets += code.matches(of: #/(?:^|[^0-9&<>])>>?\s*("[^"]*"|[^\s;|&)]+)/#).map { (path, String($0.1)) }
            // curl's `-o FILE` writes a file too.
            targets += code.matches(of: #/(?:^|\s)-o\s+("[^"]*"|[^\s;|&)]+)/#).map { (path, String($0.1)) }
        }
        #expect(targets.contains { $0.target == #""${TMPDIR:-/tmp}/todaysim-report.xml""# }, "\(targets)")
        for (path, target) in targets {
            let outside = target == "/dev/null" || target.hasPrefix("/") || target.hasPrefix(#""${TMPDIR"#) || target.hasPrefix(#""$TMPDIR"#)
            #expect(outside, "an example of \(path) writes \(target) into the current folder")
        }
        let gitignore = String(decoding: try RepositoryFiles.bytes(".gitignore"), as: UTF8.self)
        #expect(gitignore.split(separator: "\n").contains("todaysim-report.xml"), "a report written by hand stays out of commits")
    }
}

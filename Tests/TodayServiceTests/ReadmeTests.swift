import Foundation
import Testing

/// The README as a stranger reads it (issue 13, item 7): its layout table names every folder
/// of the repository, and its shell examples write nothing into the clone.
@Suite struct ReadmeTests {
    static func readme() throws -> String {
        String(decoding: try RepositoryFiles.bytes("README.md"), as: UTF8.self)
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

    @Test func theLayoutTableNamesEveryFolderAndTestTarget() throws {
        let readme = try Self.readme()
        let section = try #require(readme.components(separatedBy: "\n## Layout\n").dropFirst().first, "no Layout section")
        let table = section.components(separatedBy: "\n## ")[0].split(separator: "\n").filter { $0.hasPrefix("|") }.joined(separator: "\n")
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
        #expect(testTargets.count == 4, "\(testTargets)")
        for target in testTargets { #expect(table.contains("`Tests/\(target)`"), "the layout table does not name test target \(target)") }
    }

    /// Run from a clone, an example's `> file` or `curl -o file` must not leave files in it: output goes to
    /// /dev/null or a temporary folder.
    @Test func shellExamplesRedirectOnlyOutsideTheClone() throws {
        let blocks = try Self.readme().components(separatedBy: "```").enumerated()
            .filter { $0.offset % 2 == 1 && $0.element.hasPrefix("sh\n") }.map(\.element)
        #expect(blocks.count >= 5, "the README's sh blocks were not found")
        var targets: [String] = []
        for block in blocks {
            // Single-quoted text (JSON bodies, jq filters) and comments are not redirections.
            let code = block.replacing(#/'[^']*'/#, with: "").split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }.joined(separator: "\n")
            targets += code.matches(of: #/(?:^|[^0-9&<>])>>?\s*("[^"]*"|[^\s;|&)]+)/#).map { String($0.1) }
            // curl's `-o FILE` writes a file too.
            targets += code.matches(of: #/(?:^|\s)-o\s+("[^"]*"|[^\s;|&)]+)/#).map { String($0.1) }
        }
        #expect(targets.contains(#""${TMPDIR:-/tmp}/todaysim-report.xml""#), "\(targets)")
        for target in targets {
            let outside = target == "/dev/null" || target.hasPrefix("/") || target.hasPrefix(#""${TMPDIR"#) || target.hasPrefix(#""$TMPDIR"#)
            #expect(outside, "a README example writes \(target) into the current folder")
        }
        let gitignore = String(decoding: try RepositoryFiles.bytes(".gitignore"), as: UTF8.self)
        #expect(gitignore.split(separator: "\n").contains("todaysim-report.xml"), "a report written by hand stays out of commits")
    }
}

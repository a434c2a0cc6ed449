import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TodayTestSupport

/// Issue 12, item 12: one file is the whole server. The binary copied alone into an empty folder
/// (what the Docker image and any deployment do) serves every file it embeds.
@Suite struct StandaloneBinaryTests {
    static let embedded = [("/openapi.yaml", "OpenAPI/todaysim.yaml"), ("/bridge.js", "Web/bridge.js"), ("/", "Web/dashboard.html"),
                           ("/rules", "Web/rules.html"), ("/rules.md", "docs/RULES.md")]

    @Test func aCopiedBinaryAloneServesTheFilesOfTheRepository() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-alone-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("todaysim")
        try Self.copyAsIfBuiltElsewhere(CLITests.binary, to: copy)
        let logPath = folder.appendingPathComponent("server.log")

        let process = try ChildProcess(copy.path, ["serve", "--port", "0", "--db", ":memory:"], directory: folder.path,
                                       error: .file(logPath.path))
        defer { process.signal(SIGKILL) }
        func log() -> String { (try? String(contentsOf: logPath, encoding: .utf8)) ?? "" }

        let port = try await Self.listeningPort(in: log, process: process)
        let session = Client.makeSession()
        defer { session.finishTasksAndInvalidate() }
        for (path, file) in Self.embedded {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            request.timeoutInterval = 20
            do {
                let (data, response) = try await session.data(for: request)
                #expect((response as? HTTPURLResponse)?.statusCode == 200, "GET \(path)")
                #expect(Array(data) == (try RepositoryFiles.bytes(file)), "GET \(path) is \(file) byte for byte")
            } catch {
                Issue.record("GET \(path) failed: \(error)\nserver log:\n\(log().suffix(2000))")
            }
        }
        process.signal(SIGTERM)
        #expect(await process.ended() == 0, "server log:\n\(log().suffix(2000))")
    }

    /// Copies the binary with every mention of the folder it was built in blanked out (a same-length
    /// path that does not exist, so the binary stays valid): on this machine a copy could still reach
    /// files beside the original through such an absolute path, as SwiftPM resource bundles do; on
    /// any other machine it could not.
    static func copyAsIfBuiltElsewhere(_ binary: URL, to copy: URL) throws {
        let buildFolder = Data(binary.resolvingSymlinksInPath().deletingLastPathComponent().path.utf8)
        let blank = Data("/".utf8) + Data(repeating: UInt8(ascii: "-"), count: buildFolder.count - 1)
        var bytes = try Data(contentsOf: binary)
        var searchFrom = bytes.startIndex
        while let found = bytes.range(of: buildFolder, in: searchFrom..<bytes.endIndex) {
            bytes.replaceSubrange(found, with: blank)
            searchFrom = found.upperBound
        }
        try bytes.write(to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy.path)
    }

    /// The port of the `listening on http://127.0.0.1:PORT` line, waited for with a generous deadline.
    static func listeningPort(in log: () -> String, process: ChildProcess) async throws -> Int {
        let marker = "listening on http://127.0.0.1:"
        // Generous: a debug binary copied fresh starts in well under a second, but the whole
        // suite on PostgreSQL beside other builds once took over 30 s.
        // The log is looked at once more after the deadline: a test task resumed late (a
        // sanitizer build beside a CPU hog) must not fail a server that did start.
        let deadline = Date().addingTimeInterval(300)
        while true {
            if let line = log().split(separator: "\n").first(where: { $0.contains(marker) }),
               let port = Int(line.split(separator: marker)[1].prefix(while: \.isNumber)) {
                return port
            }
            guard Date() < deadline, process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        struct NotListening: Error, CustomStringConvertible { var description: String }
        let status = process.terminationStatus.map { "exited \($0)" } ?? "still running"
        throw NotListening(description: "the copied server did not start (\(status)):\n\(log().suffix(2000))")
    }
}

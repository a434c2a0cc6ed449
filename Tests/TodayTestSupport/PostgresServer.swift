import Foundation

/// A throwaway PostgreSQL server of this test process, run by `Scripts/postgres` in a folder of
/// its own: on a free loopback port, trust authentication, database `todaysim`. It stops (and its
/// folder goes) when the value is released, and, should the process die first, when the process
/// ends (`--until-exit-of`).
package final class PostgresServer: @unchecked Sendable {
    package let directory: String
    /// `postgres://postgres@127.0.0.1:PORT/todaysim`; the same across `stop()` and `start()`.
    package private(set) var uri: String

    /// Starts a new server in a new folder under the temporary directory, waiting on this thread
    /// (`initdb` and the start take seconds): a test uses `started()`.
    package init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-pg-\(UUID().uuidString)").path
        uri = ""
        try startWaiting()
    }

    /// A new server, started on a thread of its own (`offThePool`).
    package static func started() async throws -> PostgresServer {
        try await offThePool { try PostgresServer() }
    }

    deinit {
        try? stopWaiting()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server again after `stop()` (same cluster, same port).
    package func start() async throws {
        try await offThePool { try self.startWaiting() }
    }

    /// Fast shutdown: open connections are ended (clients see a lost connection).
    package func stop() async throws {
        try await offThePool { try self.stopWaiting() }
    }

    private func startWaiting() throws {
        uri = try Self.script(["start", directory, "--until-exit-of", String(getpid())])
    }

    private func stopWaiting() throws {
        _ = try Self.script(["stop", directory])
    }

    /// The repository's `Scripts/postgres`, found from this file's place in the checkout.
    static let command = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/postgres").path

    /// Runs `Scripts/postgres` and returns its output's last line; its error output on failure.
    /// (Not Foundation's `Process`: `waitUntilExit` does not return while the server, which
    /// outlives the script by design, holds a descriptor inherited from it; and this also runs at
    /// exit.)
    static func script(_ arguments: [String]) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-pg-\(UUID().uuidString)").path
        let outputPath = base + ".out", errorPath = base + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(command, arguments, output: .file(outputPath), error: .file(errorPath))
        } catch {
            throw ScriptFailure(arguments: arguments, status: -1, errorOutput: "\(error)")
        }
        let exitCode = child.waitForExit()
        guard exitCode == 0 else {
            let errorOutput = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw ScriptFailure(arguments: arguments, status: exitCode, errorOutput: errorOutput)
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return output.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
    }
}

/// `Scripts/postgres` failed: its arguments, exit status and error output.
package struct ScriptFailure: Error, CustomStringConvertible {
    package let arguments: [String]
    package let status: Int32
    package let errorOutput: String

    package var description: String {
        "Scripts/postgres \(arguments.joined(separator: " ")) exited \(status): \(errorOutput)"
    }
}

import Foundation

/// A throwaway PostgreSQL server of this test process, run by `Scripts/postgres` in a folder of
/// its own: on a free loopback port, trust authentication, database `todaysim`. It stops (and its
/// folder goes) when the value is released, and, should the process die first, when the process
/// ends (`--until-exit-of`).
public final class PostgresServer: @unchecked Sendable {
    public let directory: String
    /// `postgres://postgres@127.0.0.1:PORT/todaysim`; the same across `stop()` and `start()`.
    public private(set) var uri: String

    /// Starts a new server in a new folder under the temporary directory.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-pg-\(UUID().uuidString)").path
        uri = ""
        try start()
    }

    deinit {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server, or starts it again after `stop()` (same cluster, same port).
    public func start() throws {
        uri = try Self.script(["start", directory, "--until-exit-of", String(getpid())])
    }

    /// Fast shutdown: open connections are ended (clients see a lost connection).
    public func stop() throws {
        _ = try Self.script(["stop", directory])
    }

    /// The repository's `Scripts/postgres`, found from this file's place in the checkout.
    static let command = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/postgres").path

    /// Runs `Scripts/postgres` and returns its output's last line; its error output on failure.
    ///
    /// `posix_spawn` and `waitpid`, not Foundation's `Process`: `waitUntilExit` does not return
    /// while a process the child started (here the server, which outlives the script by design)
    /// holds a descriptor inherited from it; and this also runs at exit.
    static func script(_ arguments: [String]) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-pg-\(UUID().uuidString)").path
        let outputPath = base + ".out", errorPath = base + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // The test process's descriptors (listening sockets, connections) must not live on in the
        // server or its watcher. glibc 2.34 has the call, Swift's Glibc module does not show it.
        if let closeFrom = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
        }
        let argv = ([command] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command, &actions, nil, argv + [nil], environ)
        guard spawned == 0 else {
            throw ScriptFailure(arguments: arguments, status: -1, errorOutput: String(cString: strerror(spawned)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED/WEXITSTATUS are macros: a normal exit has no signal bits and the code above them.
        let exitCode = status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
        guard exitCode == 0 else {
            let errorOutput = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw ScriptFailure(arguments: arguments, status: exitCode, errorOutput: errorOutput)
        }
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return output.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
    }
}

/// `Scripts/postgres` failed: its arguments, exit status and error output.
public struct ScriptFailure: Error, CustomStringConvertible {
    public let arguments: [String]
    public let status: Int32
    public let errorOutput: String

    public var description: String {
        "Scripts/postgres \(arguments.joined(separator: " ")) exited \(status): \(errorOutput)"
    }
}

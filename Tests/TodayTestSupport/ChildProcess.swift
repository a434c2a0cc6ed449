import Foundation

/// A program run by a test: `posix_spawn` and `waitpid`, not Foundation's `Process`.
///
/// Foundation's `Process.run()` walks `/proc/self/fd` to close inherited descriptors and, on this
/// toolchain, can read past its directory buffer while other threads open and close sockets (a
/// crash seen in CI, and the reason `Scripts/sanitizers.d/asan.supp` names it); `waitUntilExit`
/// also waits for every process holding the child's pipes, not for the child. Here descriptors
/// from 3 up are closed in the child by glibc (`posix_spawn_file_actions_addclosefrom_np`), and
/// waiting is `waitpid` on the child alone.
package final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard descriptors goes.
    package enum Output {
        case null
        /// A pipe whose reading end is `outputPipe`/`errorPipe`.
        case pipe
        /// A file, created or truncated.
        case file(String)
    }

    package let pid: pid_t
    /// The reading ends of the pipes asked for (`nil` otherwise).
    package let standardOutput: FileHandle?
    package let standardError: FileHandle?
    private let lock = NSLock()
    // Guarded by `lock`: the wait status once the child was reaped.
    private var status: Int32?

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`.
    /// `environment`: the whole environment of the child (this process's when `nil`).
    package init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                directory: String? = nil, output: Output = .null, error: Output = .null) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var parentEnds: [Int32] = [], childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        func route(_ target: Output, to descriptor: Int32) throws -> FileHandle? {
            switch target {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
                return nil
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                return nil
            case .pipe:
                var ends: [Int32] = [0, 0]
                // (Close-on-exec for other spawns; every child here closes from 3 up anyway.)
                guard pipe(&ends) == 0 else { throw SpawnFailure(executable: executable, errno: errno) }
                ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                parentEnds.append(ends[0])
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], descriptor)
                return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            }
        }
        standardOutput = try route(output, to: 1)
        standardError = try route(error, to: 2)
        Self.closeFrom(3, &actions)
        if let directory { Self.changeDirectory(directory, &actions) }

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let variables = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { variables?.forEach { free($0) } }
        // The child starts with no signal blocked and the usual actions for those a test sends
        // or a pipe raises, whatever the thread that spawns it has set.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&signals, number) }
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let spawned: Int32
        if let variables {
            spawned = posix_spawnp(&child, executable, &actions, &attributes, argv + [nil], variables + [nil])
        } else {
            spawned = posix_spawnp(&child, executable, &actions, &attributes, argv + [nil], environ)
        }
        guard spawned == 0 else { throw SpawnFailure(executable: executable, errno: spawned) }
        pid = child
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = waitForExit()
        }
    }

    /// Whether the child has not ended yet (reaping it if it has).
    package var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if status != nil { return false }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid {
            status = raw
            return false
        }
        return true
    }

    package func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Blocks until the child ends; its exit code, or -1 when a signal ended it.
    @discardableResult
    package func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if status == nil {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            status = raw
        }
        return Self.exitCode(status!)
    }

    /// The exit code once ended (`nil` while running); -1 when a signal ended it.
    package var terminationStatus: Int32? {
        guard !isRunning else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return status.map(Self.exitCode)
    }

    /// Waits without blocking a thread of the cooperative pool; the exit code.
    package func ended(within seconds: Double = 60) async -> Int32? {
        await eventually(within: seconds) { !isRunning }
        return terminationStatus
    }

    /// WIFEXITED/WEXITSTATUS are macros: a normal exit has no signal bits and the code above them.
    static func exitCode(_ status: Int32) -> Int32 {
        status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }

    /// glibc 2.34 has these calls; Swift's Glibc module does not show them.
    static func closeFrom(_ first: Int32, _ actions: inout posix_spawn_file_actions_t) {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return }
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
    }

    static func changeDirectory(_ path: String, _ actions: inout posix_spawn_file_actions_t) {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return }
        typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        _ = path.withCString { unsafeBitCast(symbol, to: ChangeDirectory.self)(&actions, $0) }
    }
}

/// `posix_spawn` (or a pipe for it) failed.
package struct SpawnFailure: Error, CustomStringConvertible {
    package let executable: String
    package let errno: Int32

    package var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
}

import Foundation

extension PostgresServer {
    /// Stops every process of the server with `SIGSTOP` — the postmaster (first line of
    /// `data/postmaster.pid`) and its children, each a session of its own, so one signal to a
    /// group would not reach them: a database that freezes without going away. Its sockets stay
    /// open and the kernel still acknowledges what is sent; nothing answers until `thaw()`.
    package func freeze() throws -> FrozenPostgres {
        let pidFile = directory + "/data/postmaster.pid"
        guard let line = try String(contentsOfFile: pidFile, encoding: .utf8).split(separator: "\n").first,
              let postmaster = pid_t(line) else { throw FreezeFailure(reason: "no pid in \(pidFile)") }
        kill(postmaster, SIGSTOP)  // first: no new child after the list below
        let processes = [postmaster] + Self.children(of: postmaster)
        for child in processes.dropFirst() { kill(child, SIGSTOP) }
        return FrozenPostgres(processes: processes)
    }

    /// Processes whose parent is `parent` (field 4 of /proc/PID/stat, after the parenthesized name).
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }
}

/// A frozen PostgreSQL server's processes; `thaw()` lets them run again.
package struct FrozenPostgres: Sendable {
    package let processes: [pid_t]

    package func thaw() {
        for process in processes { kill(process, SIGCONT) }
    }
}

package struct FreezeFailure: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { "cannot freeze PostgreSQL: \(reason)" }
}

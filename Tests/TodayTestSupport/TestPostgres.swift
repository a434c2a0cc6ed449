import Foundation
import TodayStore

/// PostgreSQL for tests: a fresh, empty database per test, so tests run in parallel without
/// seeing each other's rows.
///
/// The server is `TODAYSIM_TEST_POSTGRES` (a libpq URI whose user may create databases) when set;
/// otherwise one throwaway server per test process, started on first use by `Scripts/postgres` and
/// stopped at exit.
package enum TestPostgres {
    /// A new database `t_<uuid>` on the tests' server, dropped when the value is released (hold
    /// it as long as it is used: Swift may release a local after its last use, so prefer
    /// `withDatabase` or a stored property).
    package static func database() throws -> TestDatabase {
        let admin = try adminURI.get()
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgresConnection(uri: admin).execute("CREATE DATABASE \(name)")
        return TestDatabase(name: name, uri: uri(admin, database: name), adminURI: admin)
    }

    /// Runs `body` with the URI of a new database, dropped after `body` returns.
    package static func withDatabase<T>(_ body: (String) throws -> T) throws -> T {
        let database = try database()
        return try withExtendedLifetime(database) { try body(database.uri) }
    }

    /// `withDatabase` for a body that waits.
    package static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let database = try database()
        defer { withExtendedLifetime(database) {} }
        return try await body(database.uri)
    }

    /// The URI of the server's maintenance database, from the environment or a server started
    /// now (once per process: a static `let` is initialized once, under a lock).
    static let adminURI: Result<String, any Error> = Result {
        if let given = ProcessInfo.processInfo.environment["TODAYSIM_TEST_POSTGRES"], !given.isEmpty {
            return given
        }
        let server = try PostgresServer()
        sharedServer = server
        atexit {
            // Stop the server now rather than leave it to the watcher. `system` rather than
            // `Process`: Foundation's run loop is no place to wait in during exit.
            if let directory = sharedServerDirectory {
                _ = system("\(shellQuoted(PostgresServer.command)) stop \(shellQuoted(directory)) >/dev/null 2>&1")
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
        return server.uri
    }

    /// `base` pointing at `database` instead: the path of a URI, or a `dbname=` appended to a
    /// `key=value` string (where the last one wins).
    package static func uri(_ base: String, database: String) -> String {
        guard let schemeEnd = base.range(of: "://")?.upperBound else { return base + " dbname=\(database)" }
        let authorityEnd = base[schemeEnd...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? base.endIndex
        let queryStart = base[authorityEnd...].firstIndex(of: "?") ?? base.endIndex
        return String(base[..<authorityEnd]) + "/" + database + String(base[queryStart...])
    }
}

/// The test process's own server: kept alive until exit.
nonisolated(unsafe) private var sharedServer: PostgresServer?
private var sharedServerDirectory: String? { sharedServer?.directory }

private func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// One test's database; dropped (its connections ended) when released.
package final class TestDatabase: Sendable {
    package let name: String
    package let uri: String
    private let adminURI: String

    init(name: String, uri: String, adminURI: String) {
        self.name = name
        self.uri = uri
        self.adminURI = adminURI
    }

    deinit {
        _ = try? PostgresConnection(uri: adminURI).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

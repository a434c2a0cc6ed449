import Foundation
import Testing
import TodayStore

/// Issue 12, items 3, 6 and 7: what `todaysim serve` refuses to open, each with exit 2 and one
/// line naming the file, and without altering it.
@Suite(.sqliteOnly) struct DatabaseFileTests {
    let cli = CLITests()

    /// Every file in `directory` with its bytes.
    func snapshot(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    func expectRefused(_ result: CLITests.Run, path: String, saying words: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 2, "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("todaysim: cannot open the database \(path): "), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(words), "\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func aSecondServerOnADatabaseInUseIsRefused() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let second = try await cli.run(["serve", "--port", "0", "--db", server.databasePath])
        expectRefused(second, path: server.databasePath, saying: "in use by another todaysim (pid \(getpid()))")
        // The first server is unaffected and, once stopped, lets the next one in.
        #expect((try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])).status == 200)
        server.stop()
        try server.start()
        #expect((try await Client(server: server).get("/v1/sessions/s1"))["version"] == 2)
    }

    @Test func anotherProgramsDatabaseIsRefusedUntouched() async throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("theirs.sqlite").path
        do {
            let theirs = try Database(path: path)
            try theirs.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT); INSERT INTO orders (item) VALUES ('tea')")
        }
        let before = try snapshot(directory)
        #expect(before.keys.sorted() == ["theirs.sqlite"])
        expectRefused(try await cli.run(["serve", "--port", "0", "--db", path]), path: path, saying: "another program")
        #expect(try snapshot(directory) == before, "not switched to WAL, no tables, no -wal/-shm, no lock file")

        // Marked by another program: refused from the header alone.
        let marked = directory.appendingPathComponent("marked.sqlite").path
        do { try Database(path: marked).execute("PRAGMA application_id = 42; CREATE TABLE t (x)") }
        expectRefused(try await cli.run(["serve", "--port", "0", "--db", marked]), path: marked, saying: "application_id 42")

        let text = directory.appendingPathComponent("notes.txt")
        try Data(String(repeating: "not a database\n", count: 20).utf8).write(to: text)
        expectRefused(try await cli.run(["serve", "--port", "0", "--db", text.path]), path: text.path, saying: "not an SQLite database")
        #expect(try Data(contentsOf: text) == Data(String(repeating: "not a database\n", count: 20).utf8))
    }

    @Test func aNewFileIsMarkedAsTodaysims() throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        do { _ = try SessionStore(path: path) }
        #expect(try Database(path: path).integer("PRAGMA application_id") == Int64(DatabaseFile.applicationId))
    }

    @Test func aDamagedFileIsRefused() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        for index in 0..<40 { try await client.create(["uid": .string("u\(index)"), "id": .string("s\(index)")]) }
        server.stop()
        let path = server.databasePath
        do { try Database(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        let pageSize = 4096
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size >= 6 * pageSize)
        // Scribble over a page in the middle of the file (its b-tree header and cells).
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        try file.seek(toOffset: UInt64(size / pageSize / 2 * pageSize))
        try file.write(contentsOf: Data(repeating: 0xA5, count: 512))
        try file.close()
        expectRefused(try await cli.run(["serve", "--port", "0", "--db", path]), path: path, saying: "it is damaged (quick_check: ")
    }

    /// Root writes any file, so the server runs as `nobody` here (`setpriv`), as an operator's
    /// service user would, against a file it may read but not write.
    @Test func aReadOnlyFileIsRefused() async throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ro.sqlite").path
        do { _ = try SessionStore(path: path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        try? FileManager.default.removeItem(atPath: path + ".lock")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result: CLITests.Run
        if getuid() == 0 {
            // A copy of the binary nobody may run (the build folder may not be reachable for it).
            let binary = directory.appendingPathComponent("todaysim")
            try FileManager.default.copyItem(at: CLITests.binary, to: binary)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary.path)
            // Under Scripts/sanitizers the binary is the address sanitizer's, told to read a
            // suppressions file in the clone, which nobody may not reach; the server spawns
            // nothing, so it runs without that file (ASan would stop at once otherwise).
            let sanitizer = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map {
                $0.split(separator: ":").filter { !$0.hasPrefix("suppressions=") }.joined(separator: ":")
            }
            result = try await cli.run(["--reuid=65534", "--regid=65534", "--clear-groups", binary.path,
                                  "serve", "--port", "0", "--db", path], executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
                                 environment: ["ASAN_OPTIONS": sanitizer])
        } else {
            result = try await cli.run(["serve", "--port", "0", "--db", path])
        }
        expectRefused(result, path: path, saying: "it is read-only for this process")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}

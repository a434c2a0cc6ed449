import Foundation
import Testing
import TodayHost
@testable import TodayStore

/// The schema is versioned with `PRAGMA user_version` and migrated at start; what an older
/// version wrote stays readable.
@Suite struct MigrationTests {
    @Test func aVersion1DatabaseIsMigratedAndItsViolationsBackfilled() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("v1.sqlite").path

        // A session as schema 1 stored it: state as JSON, its timeline rows, no violations table.
        var runner = try SessionRunner(id: "old", config: SessionConfig(uid: "u1"))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.advance(by: 5000)
        let state = try JSONEncoder().encode(runner.session)
        do {
            let database = try Database(path: path)
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute(Schema.migrations[0])
            try database.execute("PRAGMA user_version = 1")
            let insert = try database.prepare("""
                INSERT INTO sessions (id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state)
                VALUES ('old', 'u1', NULL, 0, 'virtual', 0, NULL, ?, ?)
                """)
            try insert.run([.integer(runner.session.version), .blob(Array(state))])
            let entry = try database.prepare("INSERT INTO timeline (session, seq, kind, entry) VALUES (1, ?, ?, ?)")
            for item in runner.timeline {
                try entry.run([.integer(item.seq), .text(item.kind.rawValue), .blob(Array(item.json.serialized().utf8))])
            }
        }

        let store = try SessionStore(path: path)
        #expect(try Database(path: path).integer("PRAGMA user_version") == Schema.currentVersion)
        #expect(try store.session("old").session == runner.session, "a JSON state from schema 1 still reads")
        let violations = try store.violations(uid: nil, code: nil, limit: 100, after: nil)
        #expect(violations.violations.map(\.sessionId) == ["old"])
        let entry = try JSON.parse(bytes: violations.violations[0].entry)
        #expect(entry["type"] == "M7")
        // The session goes on, written in the current form.
        let write = try store.apply(.lifecycle(.tabActivated(requestId: "t2")), to: "old")
        #expect(write.stored.session.version == runner.session.version + 1)
    }
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Sessions an earlier todaysim left in its store go on under this one (issue 46, item 4): the
/// fixture `Tests/Fixtures/stored-sessions/` is a SQLite file and a PostgreSQL dump written by
/// the binary of `main` before the session state's encoding changed, with 39 sessions cut in the
/// middle of what they did (a pull in flight, a deadline pending, a recovery reload awaited, a
/// dialog open, a closed session, an idempotency key, a fork, 24 random ones), and what each
/// answered when that binary continued it (`continuations.json`, made by
/// `Scripts/make-stored-sessions`). This build, opened on a copy of the store, must answer every
/// continuation step the same, and read back the same timeline and report. Runs once (it uses
/// both stores whatever the run's store is).
@Suite(.sqliteOnly) struct StoredSessionsTests {
    static let fixture = RepositoryFiles.root.appendingPathComponent("Tests/Fixtures/stored-sessions")

    @Test func sessionsStoredInSQLiteByTheEarlierVersionGoOn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stored-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("sessions.sqlite").path
        try FileManager.default.copyItem(atPath: Self.fixture.appendingPathComponent("sessions.sqlite").path, toPath: copy)
        let server = try TestServer(database: copy)
        try await Self.expectContinuations(on: server)
    }

    @Test func sessionsStoredInPostgreSQLByTheEarlierVersionGoOn() async throws {
        try await TestPostgres.withDatabase { uri in
            let restore = try ChildProcess("/usr/bin/env", ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-f",
                                                            Self.fixture.appendingPathComponent("sessions.pg.sql").path, uri],
                                           output: .null, error: .null)
            #expect(restore.waitForExit() == 0, "psql could not restore sessions.pg.sql")
            let server = try TestServer(database: uri)
            try await Self.expectContinuations(on: server)
        }
    }

    /// Every session of `continuations.json`: the keyed retry, each step, the run to idle, then
    /// the timeline and the report, each equal to what the earlier binary answered.
    static func expectContinuations(on server: TestServer) async throws {
        let client = Client(server: server)
        let lines = String(decoding: try RepositoryFiles.bytes("Tests/Fixtures/stored-sessions/continuations.json"), as: UTF8.self)
            .split(separator: "\n").dropFirst()
        #expect(lines.count == 39)
        for line in lines {
            let expected = try JSON.parse(bytes: Array(line.utf8))
            let id = try #require(expected["session"]?.stringValue)
            guard case let .array(answers)? = expected["answers"] else { Issue.record("\(id): no answers"); continue }
            for (index, answer) in answers.enumerated() {
                let reply: Client.Reply
                if let key = answer["retry"]?.stringValue, let body = answer["body"]?.stringValue {
                    reply = try await client.send("POST", "/v1/sessions/\(id)/steps", body: Array(body.utf8),
                                                  headers: ["Idempotency-Key": key])
                } else {
                    let step = try #require(answer["step"])
                    reply = try await client.post("/v1/sessions/\(id)/steps", .array([step]))
                }
                #expect(reply.status == Int(answer["status"]?.int64Value ?? 0), "\(id) step \(index): \(reply.text)")
                #expect(sortedKeys(kept(reply.json)) == sortedKeys(answer["answer"] ?? .null), "\(id) step \(index)")
            }
            let timeline = try await client.get("/v1/sessions/\(id)/timeline?limit=1000")
            #expect(sortedKeys(timeline.json) == sortedKeys(expected["timeline"] ?? .null), "\(id): timeline")
            let report = try await client.get("/v1/sessions/\(id)/report")
            #expect(sortedKeys(report.json) == sortedKeys(expected["report"] ?? .null), "\(id): report")
        }
    }

    /// What the fixture keeps of a `/steps` answer (as `Scripts/make-stored-sessions` does): each
    /// result without its view and entries but with its entries' `seq`s, and the batch's view; a
    /// problem document whole.
    static func kept(_ answer: JSON) -> JSON {
        guard case let .array(results)? = answer["results"], let session = answer["session"] else { return answer }
        let trimmed = results.map { result -> JSON in
            guard case let .object(fields) = result else { return result }
            var kept = fields.filter { $0.0 != "session" && $0.0 != "entries" }
            let seqs = (result["entries"].flatMap { entries -> [JSON]? in
                guard case let .array(items) = entries else { return nil }
                return items.map { $0["seq"] ?? .null }
            }) ?? []
            kept.append(("seqs", .array(seqs)))
            return .object(kept)
        }
        return .object([("results", .array(trimmed)), ("session", session)])
    }

    /// `value` with every object's keys in order, so two answers compare by content.
    static func sortedKeys(_ value: JSON) -> JSON {
        switch value {
        case let .object(fields): return .object(fields.map { ($0.0, sortedKeys($0.1)) }.sorted { $0.0 < $1.0 })
        case let .array(items): return .array(items.map(sortedKeys))
        default: return value
        }
    }
}

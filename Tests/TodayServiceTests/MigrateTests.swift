import Foundation
import Testing
import TodayHost
@testable import TodayStore
import TodayTestSupport

/// `todaysim migrate` (issue 14, item 6): a SQLite store copied into PostgreSQL reads back the
/// same, session by session and across sessions, and keeps answering keyed retries; and it
/// refuses (exit 2, one line, no password) what it must not copy into or from. Runs once (it
/// uses both stores whatever the run's store is).
@Suite(.sqliteOnly) struct MigrateTests {
    let cli = CLITests()
    /// Both stores read the sessions at one Unix time: a `wall` session's clock is the time
    /// elapsed since its creation.
    static let now: Millis = 1_700_000_000_000
    /// Small, so a long timeline and the sessions span several transactions.
    static let chunkRows = "7"

    /// A soft refresh answered twice, the second time `cancelled`: M1 and M4 (two violations).
    static func answeredTwice(_ requestId: String) -> [Input] {
        let result = { (status: String) -> Input in
            .webEvent(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(requestId), "mode": "soft",
                       "status": .string(status)])
        }
        return [.lifecycle(.tabActivated(requestId: requestId)), result("failed"), result("cancelled")]
    }

    /// The source store: sessions of every kind, violations interleaved across sessions, keys
    /// per session, a long timeline, a fork; and, written as a crash would leave them, hidden
    /// rows (a removal not finished, a fork cut short) that must not be copied.
    static func buildSource(_ path: String) throws -> [String: [UInt8]] {
        let store = try SessionStore(path: path, unixNow: { now })
        var labelled = SessionConfig(uid: "u1")
        labelled.label = "team-a"
        var wall = SessionConfig(uid: "u2")
        wall.clock = .wall
        _ = try store.create(id: "virtual", config: labelled, ttlMs: 60_000)
        _ = try store.create(id: "wall", config: wall)
        _ = try store.create(id: "closed", config: SessionConfig(uid: "u3"))
        _ = try store.create(id: "long", config: labelled)
        for round in 0..<3 {
            for id in ["virtual", "wall"] {
                for input in answeredTwice("\(id)-\(round)") { _ = try store.apply(input, to: id) }
            }
        }
        for _ in 0..<40 { _ = try store.apply(.clock(.advanceBy(250)), to: "long") }
        _ = try store.apply(.lifecycle(.tabActivated(requestId: "pending")), to: "wall")
        _ = try store.fork("virtual", as: "virtual-fork")
        _ = try store.apply(.teardown, to: "closed")
        // The same key on two sessions: each keeps its own answer.
        var answers: [String: [UInt8]] = [:]
        for id in ["virtual", "wall"] {
            guard case let .applied(_, answer?) = try keyed(store, id, key: "k1") else { throw Failure("\(id): not applied") }
            answers[id] = answer
        }
        store.close()
        let database = try Database(path: path)
        try database.execute("""
            INSERT INTO sessions (id, uid, closed, clock, wall_origin_ms, version, state, last_active_ms)
                SELECT 'removing/' || ord, '', 2, clock, wall_origin_ms, version, state, last_active_ms FROM sessions WHERE id = 'long';
            INSERT INTO sessions (id, uid, closed, clock, wall_origin_ms, version, state, last_active_ms)
                SELECT 'forking/x', '', 2, clock, wall_origin_ms, version, state, last_active_ms FROM sessions WHERE id = 'virtual';
            INSERT INTO timeline (session, seq, kind, entry)
                SELECT h.ord, t.seq, t.kind, t.entry FROM timeline t, sessions h
                WHERE t.session = (SELECT ord FROM sessions WHERE id = 'virtual') AND h.closed = 2;
            INSERT INTO violations (session, seq, code)
                SELECT h.ord, v.seq, v.code FROM violations v, sessions h
                WHERE v.session = (SELECT ord FROM sessions WHERE id = 'virtual') AND h.closed = 2;
            INSERT INTO requests (session, request_id, record)
                SELECT h.ord, r.request_id, r.record FROM requests r, sessions h
                WHERE r.session = (SELECT ord FROM sessions WHERE id = 'virtual') AND h.closed = 2;
            INSERT INTO idempotency (session, key, fingerprint, response, created_ms)
                SELECT h.ord, 'k1', x'00', x'00', 0 FROM sessions h WHERE h.closed = 2;
            """)
        return answers
    }

    /// A keyed batch of one pull on session `id` (its answer names the session).
    static func keyed(_ store: SessionStore, _ id: String, key: String) throws -> SessionStore.Submitted {
        let done = DispatchSemaphore(value: 0)
        let box = KeyedBox()
        store.apply(steps: [.input(.gesture(.pull(requestId: nil)))], to: id, ifVersion: nil,
                    idempotency: .init(key: key, fingerprint: Array("pull".utf8), answer: .input, warnings: [])) {
            box.result = $0
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// Every row a store keeps, one line each, visible sessions only (hidden ones must not be
    /// copied): sessions and violations in their stored order, the rest sorted. `hex`: the
    /// dialect's hex of a blob.
    static func rows(hex: (String) -> String, _ query: (String) throws -> [String]) throws -> [String] {
        let visible = "JOIN sessions s ON s.ord = x.session WHERE s.closed < 2"
        let sessions = try query("""
            SELECT id || ' ' || uid || ' ' || coalesce(label, '-') || ' ' || closed || ' ' || clock || ' ' || wall_origin_ms
                || ' ' || coalesce(next_due_ms, -1) || ' ' || version || ' ' || \(hex("state")) || ' ' || coalesce(ttl_ms, -1)
                || ' ' || coalesce(last_active_ms, -1) || ' ' || coalesce(closed_at_ms, -1)
            FROM sessions WHERE closed < 2 ORDER BY ord
            """)
        let violations = try query("SELECT s.id || ' ' || x.seq || ' ' || x.code FROM violations x \(visible) ORDER BY x.ord")
        let unordered = try [
            "SELECT 'timeline ' || s.id || ' ' || x.seq || ' ' || x.kind || ' ' || \(hex("x.entry")) FROM timeline x \(visible)",
            "SELECT 'request ' || s.id || ' ' || x.request_id || ' ' || \(hex("x.record")) FROM requests x \(visible)",
            """
            SELECT 'key ' || s.id || ' ' || x.key || ' ' || \(hex("x.fingerprint")) || ' ' || \(hex("x.response")) || ' '
                || x.created_ms FROM idempotency x \(visible)
            """,
        ].flatMap { try query($0) }
        return sessions + ["violations:"] + violations + unordered.sorted()
    }

    static func sqliteRows(_ path: String) throws -> [String] {
        let database = try Database(path: path)
        return try rows(hex: { "lower(hex(\($0)))" }) { sql in try database.prepare(sql).rows { $0.text(0) ?? "NULL" } }
    }

    static func postgresRows(_ uri: String) throws -> [String] {
        let connection = try PostgresConnection(uri: uri)
        return try rows(hex: { "encode(\($0), 'hex')" }) { sql in
            let result = try connection.execute(sql)
            return try (0..<result.rowCount).map { try result.text($0, 0) }
        }
    }

    /// What a client reads of the store: each session's view, whole timeline and report, the
    /// lists, and the violations across sessions.
    static func readBack(_ store: SessionStore) throws -> [String] {
        let text = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self) }
        let sessions = try store.list(uid: nil, label: nil, closed: nil, limit: 100, after: nil).sessions
        var lines = ["sessions: " + sessions.map(\.id).joined(separator: " "),
                     "team-a: " + (try store.list(uid: nil, label: "team-a", closed: nil, limit: 100, after: nil).sessions.map(\.id))
                        .joined(separator: " "),
                     "closed: " + (try store.list(uid: nil, label: nil, closed: true, limit: 100, after: nil).sessions.map(\.id))
                        .joined(separator: " ")]
        for session in sessions {
            let id = session.id
            lines.append("\(id) wall origin \(session.wallOriginMs) view \(text(try store.viewBytes(id)))")
            let timeline = try store.timeline(id, after: 0, limit: 1000, kind: nil)
            #expect(!timeline.more)
            lines += timeline.entries.map { "\(id) \(text($0))" }
            lines.append("\(id) report \(try store.report(id).json.serialized())")
        }
        let violations = try store.violations(uid: nil, code: nil, limit: 1000, after: nil).violations
        return lines + violations.map { "violation \($0.sessionId) \(text($0.entry))" }
    }

    @Test func aMigratedStoreReadsBackTheSameAndReplaysKeyedRetries() async throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("sessions.sqlite").path
        let answers = try Self.buildSource(source)
        let target = try TestPostgres.database()
        let expectedRows = try Self.sqliteRows(source)

        let migrate = try await cli.run(["migrate", "--from", source, "--to", target.uri, "--chunk-rows", Self.chunkRows])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        let count = { (prefix: String) in expectedRows.filter { $0.hasPrefix(prefix) }.count }
        let violations = expectedRows.count - (expectedRows.firstIndex(of: "violations:") ?? 0) - 1
            - count("timeline ") - count("request ") - count("key ")
        let summary = "migrated 5 sessions, \(count("timeline ")) timeline entries, \(count("request ")) request records, "
            + "\(violations) violations, 2 idempotency keys from \(source) to postgres://"
        #expect(migrate.stdout.hasPrefix(summary), "\(migrate.stdout)")
        #expect(migrate.stdout.hasSuffix(" s\n") && migrate.stdout.filter { $0 == "\n" }.count == 1)

        // Every row as stored, hidden ones left out (and none hidden left in the target).
        let copiedRows = try Self.postgresRows(target.uri)
        #expect(copiedRows == expectedRows)
        #expect(expectedRows.filter { $0.hasPrefix("timeline long ") }.count > 40, "the long timeline spans chunks")
        let everything = try PostgresConnection(uri: target.uri)
            .execute("SELECT (SELECT count(*) FROM sessions) || ' ' || (SELECT count(*) FROM timeline) || ' ' || (SELECT count(*) FROM idempotency)")
        #expect(try everything.text(0, 0) == "5 \(count("timeline ")) 2", "no hidden row was copied")

        // What a client reads, through both stores.
        let original = try SessionStore(path: source, unixNow: { Self.now })
        let expected = try Self.readBack(original)
        original.close()
        let migrated = try SessionStore.open(target.uri, unixNow: { Self.now })
        defer { migrated.close() }
        #expect(try Self.readBack(migrated) == expected)
        let violationSessions = expected.filter { $0.hasPrefix("violation ") }.map { $0.split(separator: " ")[1] }
        #expect(violationSessions.prefix(4) == ["virtual", "virtual", "wall", "wall"], "violations interleave across sessions")

        // A keyed retry replays its session's own answer; the key is new on the fork.
        for id in ["virtual", "wall"] {
            guard case let .replayed(answer) = try Self.keyed(migrated, id, key: "k1") else {
                Issue.record("\(id): the retry was applied again")
                continue
            }
            #expect(answer == answers[id])
        }
        guard case .applied = try Self.keyed(migrated, "virtual-fork", key: "k1") else {
            Issue.record("a key of another session replayed")
            return
        }
        withExtendedLifetime(target) {}
    }

    @Test func refusesATargetWithSessionsASourceInUseAndAnUnreachableTarget() async throws {
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("sessions.sqlite").path
        let held = try SessionStore(path: source)
        _ = try held.create(id: "s1", config: SessionConfig(uid: "u1"))
        let target = try TestPostgres.database()
        try SessionStore.open(target.uri).close()

        // A source a server holds: refused before anything is copied.
        let inUse = try await cli.run(["migrate", "--from", source, "--to", target.uri])
        #expect(inUse.status == 2)
        #expect(inUse.stderr.hasPrefix("todaysim: cannot migrate: the source \(source): it is in use by another todaysim"), "\(inUse.stderr)")
        held.close()

        // What a failed copy left (hidden rows) goes first; then the copy shows.
        let connection = try PostgresConnection(uri: target.uri)
        let sessions = "SELECT string_agg(id, ' ' ORDER BY id) FROM sessions"
        #expect(try connection.execute(sessions).isNull(0, 0), "the refused run copied nothing")
        try connection.execute("""
            INSERT INTO sessions (id, uid, closed, clock, wall_origin_ms, version, state, last_active_ms)
                VALUES ('migrating/0/s1', 'u1', 2, 'virtual', 0, 1, '\\x00', 0);
            INSERT INTO timeline (session, seq, kind, entry) SELECT ord, 1, 'input', '\\x00' FROM sessions;
            """)
        let copied = try await cli.run(["migrate", "--from", source, "--to", target.uri])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(try connection.execute(sessions).text(0, 0) == "s1")
        #expect(try connection.execute("SELECT count(*) FROM timeline WHERE entry = '\\x00'").text(0, 0) == "0", "the leftover's rows went")

        // A target that holds sessions.
        let again = try await cli.run(["migrate", "--from", source, "--to", target.uri])
        #expect(again.status == 2)
        #expect(again.stderr.hasPrefix("todaysim: cannot migrate: postgres://") && again.stderr.contains("already holds 1 session(s)"),
                "\(again.stderr)")
        #expect(try connection.execute(sessions).text(0, 0) == "s1", "unchanged")

        // An unreachable target: one line, no password.
        let secret = "s3cret-Passw0rd"
        let unreachable = try await cli.run(["migrate", "--from", source,
                                       "--to", "postgres://todaysim:\(secret)@127.0.0.1:\(unusedLoopbackPort())/todaysim"])
        #expect(unreachable.status == 2)
        #expect(unreachable.stderr.hasPrefix("todaysim: cannot migrate: "), "\(unreachable.stderr)")
        #expect(unreachable.stderr.filter { $0 == "\n" }.count == 1, "one line: \(unreachable.stderr)")
        #expect(!unreachable.stderr.contains(secret) && unreachable.stdout.isEmpty)

        // Usage: both ends named, the target a PostgreSQL URI.
        for arguments in [["migrate", "--from", source], ["migrate", "--from", source, "--to", source + ".copy"]] {
            #expect(try await cli.run(arguments).status == 2, "\(arguments)")
        }
        withExtendedLifetime(target) {}
    }
}

private final class KeyedBox: @unchecked Sendable {
    var result: Result<SessionStore.Submitted, StoreError>?
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// How hard a commit waits for the disk. In WAL mode `NORMAL` loses nothing when the process
/// is killed (only a power cut can drop the last commits); `FULL` also survives that, at an
/// fsync per commit.
package enum Durability: String, Sendable, CaseIterable {
    case normal = "NORMAL"
    case full = "FULL"
}

/// The database layout, versioned with `PRAGMA user_version` and migrated at start.
enum Schema {
    static let currentVersion: Int64 = 6

    /// `migrations[n]` takes a database from version `n` to `n + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE sessions (
            ord INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            uid TEXT NOT NULL,
            label TEXT,
            closed INTEGER NOT NULL DEFAULT 0,
            clock TEXT NOT NULL,
            wall_origin_ms INTEGER NOT NULL,
            next_due_ms INTEGER,
            version INTEGER NOT NULL,
            state BLOB NOT NULL
        );
        CREATE INDEX sessions_by_uid ON sessions(uid, ord);
        CREATE INDEX sessions_by_label ON sessions(label, ord) WHERE label IS NOT NULL;
        CREATE INDEX sessions_wall_due ON sessions(wall_origin_ms + next_due_ms)
            WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL;
        CREATE TABLE timeline (
            session INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            entry BLOB NOT NULL,
            PRIMARY KEY (session, seq)
        ) WITHOUT ROWID;
        CREATE TABLE requests (
            session INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            record BLOB NOT NULL,
            PRIMARY KEY (session, request_id)
        ) WITHOUT ROWID;
        """,
        // v2: violations across sessions, newest last, filterable by code (GET /v1/violations).
        """
        CREATE TABLE violations (
            ord INTEGER PRIMARY KEY,
            session INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            code TEXT NOT NULL
        );
        CREATE INDEX violations_by_code ON violations(code, ord);
        INSERT INTO violations (session, seq, code)
            SELECT session, seq, json_extract(entry, '$.type') FROM timeline WHERE kind = 'violation' ORDER BY session, seq;
        """,
        // v3: idle expiry (`ttlMs`) and retention of closed sessions.
        """
        ALTER TABLE sessions ADD COLUMN ttl_ms INTEGER;
        ALTER TABLE sessions ADD COLUMN last_active_ms INTEGER;
        ALTER TABLE sessions ADD COLUMN closed_at_ms INTEGER;
        CREATE INDEX sessions_idle ON sessions(last_active_ms + ttl_ms) WHERE closed = 0 AND ttl_ms IS NOT NULL;
        CREATE INDEX sessions_closed_at ON sessions(closed_at_ms) WHERE closed_at_ms IS NOT NULL;
        """,
        // v4: answers kept for `Idempotency-Key` retries, written with the input they answer.
        """
        CREATE TABLE idempotency (
            key TEXT PRIMARY KEY,
            fingerprint BLOB NOT NULL,
            response BLOB NOT NULL,
            created_ms INTEGER NOT NULL
        );
        CREATE INDEX idempotency_by_age ON idempotency(created_ms);
        """,
        // v5: sessions are removed (and forks copied) in small transactions; `closed = 2`
        // marks a row being removed or copied, hidden from every read. Violations by session
        // for those deletions.
        """
        CREATE INDEX violations_by_session ON violations(session, seq);
        CREATE INDEX sessions_hidden ON sessions(ord) WHERE closed = 2;
        """,
        // v6: an idempotency key belongs to its session: a session removed takes its keys along
        // (a retry against a new session under the same id is applied, not answered from the
        // old one), and one session's keys never collide with another's. Keys kept so far (24 h
        // at most) cannot be given a session and are dropped. And `ord`s are never used again
        // (AUTOINCREMENT): a removed session's `ord` once went to the next session created, so
        // a cursor or a cached (ord, version) could name another session than it was read from.
        """
        CREATE TABLE sessions_v6 (
            ord INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            uid TEXT NOT NULL,
            label TEXT,
            closed INTEGER NOT NULL DEFAULT 0,
            clock TEXT NOT NULL,
            wall_origin_ms INTEGER NOT NULL,
            next_due_ms INTEGER,
            version INTEGER NOT NULL,
            state BLOB NOT NULL,
            ttl_ms INTEGER,
            last_active_ms INTEGER,
            closed_at_ms INTEGER
        );
        INSERT INTO sessions_v6 (ord, id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms,
                                 last_active_ms, closed_at_ms)
            SELECT ord, id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms,
                   last_active_ms, closed_at_ms FROM sessions;
        DROP TABLE sessions;
        ALTER TABLE sessions_v6 RENAME TO sessions;
        CREATE INDEX sessions_by_uid ON sessions(uid, ord);
        CREATE INDEX sessions_by_label ON sessions(label, ord) WHERE label IS NOT NULL;
        CREATE INDEX sessions_wall_due ON sessions(wall_origin_ms + next_due_ms)
            WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL;
        CREATE INDEX sessions_idle ON sessions(last_active_ms + ttl_ms) WHERE closed = 0 AND ttl_ms IS NOT NULL;
        CREATE INDEX sessions_closed_at ON sessions(closed_at_ms) WHERE closed_at_ms IS NOT NULL;
        CREATE INDEX sessions_hidden ON sessions(ord) WHERE closed = 2;
        CREATE TABLE violations_v6 (
            ord INTEGER PRIMARY KEY AUTOINCREMENT,
            session INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            code TEXT NOT NULL
        );
        INSERT INTO violations_v6 (ord, session, seq, code) SELECT ord, session, seq, code FROM violations;
        DROP TABLE violations;
        ALTER TABLE violations_v6 RENAME TO violations;
        CREATE INDEX violations_by_code ON violations(code, ord);
        CREATE INDEX violations_by_session ON violations(session, seq);
        DROP TABLE idempotency;
        CREATE TABLE idempotency (
            session INTEGER NOT NULL,
            key TEXT NOT NULL,
            fingerprint BLOB NOT NULL,
            response BLOB NOT NULL,
            created_ms INTEGER NOT NULL,
            PRIMARY KEY (session, key)
        ) WITHOUT ROWID;
        CREATE INDEX idempotency_by_age ON idempotency(created_ms);
        """,
    ]

    /// Refuses a damaged file at start (`PRAGMA quick_check`: every page and index entry,
    /// without comparing index contents, so it stays fast on large files).
    static func check(_ database: Database, path: String) throws(StoreError) {
        do {
            let statement = try database.prepare("PRAGMA quick_check(3)")
            var problems: [String] = []
            while try statement.step() { problems.append((statement.text(0) ?? "").split(whereSeparator: \.isNewline).joined(separator: " ")) }
            guard problems == ["ok"] else {
                throw StoreError.damaged(path: path, detail: problems.joined(separator: "; "))
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .damaged(path: path, detail: "\(error)")
        }
    }

    /// Brings the database to `currentVersion`; refuses one written by a newer todaysim.
    /// `mark`: the file is new (or from before the mark) and gets todaysim's `application_id`.
    static func migrate(_ database: Database, durability: Durability, mark: Bool = false) throws(StoreError) {
        do {
            try database.execute("PRAGMA journal_mode = WAL")
            try database.execute("PRAGMA synchronous = \(durability.rawValue)")
            try database.execute("PRAGMA foreign_keys = ON")
            var version = try database.integer("PRAGMA user_version")
            guard version <= currentVersion else { throw StoreError.newerSchema(found: version, supported: currentVersion) }
            while version < currentVersion {
                let migration = migrations[Int(version)]
                try database.transaction {
                    try database.execute(migration)
                    try database.execute("PRAGMA user_version = \(version + 1)")
                }
                version += 1
            }
            if mark { try database.execute("PRAGMA application_id = \(DatabaseFile.applicationId)") }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw .database(error)
        } catch {
            throw .database(SQLiteError(code: -1, message: "\(error)", sql: nil))
        }
    }
}

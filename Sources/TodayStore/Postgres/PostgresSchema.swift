/// The PostgreSQL layout, versioned in `todaysim_schema` and migrated at start (one server at
/// a time: the migration holds an advisory lock, so replicas starting together do not race).
/// Every table is keyed by its session's `ord` (a sharding extension
/// could distribute them all by it); no constraint spans sessions.
enum PostgresSchema {
    static var currentVersion: Int64 { Int64(migrations.count) }

    /// How long one statement of a migration may take (see `migrate`).
    static let migrationDeadline: Duration = .seconds(600)

    /// Held while migrating, so only one server migrates.
    static let migrationLock: Int64 = 0x5444_534D_0001

    /// `migrations[n]` takes a database from version `n` to `n + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE sessions (
            ord bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            uid text NOT NULL,
            label text,
            closed smallint NOT NULL DEFAULT 0,
            clock text NOT NULL,
            wall_origin_ms bigint NOT NULL,
            next_due_ms bigint,
            version bigint NOT NULL,
            state bytea NOT NULL,
            ttl_ms bigint,
            last_active_ms bigint NOT NULL,
            closed_at_ms bigint
        );
        CREATE INDEX sessions_by_uid ON sessions (uid, ord) WHERE closed < 2;
        CREATE INDEX sessions_by_label ON sessions (label, ord) WHERE closed < 2 AND label IS NOT NULL;
        CREATE INDEX sessions_wall_due ON sessions ((wall_origin_ms + next_due_ms))
            WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL;
        CREATE INDEX sessions_idle ON sessions ((last_active_ms + ttl_ms)) WHERE closed = 0 AND ttl_ms IS NOT NULL;
        CREATE INDEX sessions_closed_at ON sessions (closed_at_ms) WHERE closed_at_ms IS NOT NULL;
        CREATE INDEX sessions_hidden ON sessions (ord) WHERE closed = 2;
        CREATE TABLE timeline (
            session bigint NOT NULL,
            seq integer NOT NULL,
            kind text NOT NULL,
            entry bytea NOT NULL,
            PRIMARY KEY (session, seq)
        );
        CREATE INDEX timeline_by_kind ON timeline (session, kind, seq);
        CREATE TABLE requests (
            session bigint NOT NULL,
            request_id text NOT NULL,
            record bytea NOT NULL,
            PRIMARY KEY (session, request_id)
        );
        CREATE TABLE violations (
            ord bigint GENERATED ALWAYS AS IDENTITY,
            session bigint NOT NULL,
            seq integer NOT NULL,
            code text NOT NULL,
            PRIMARY KEY (session, seq)
        );
        CREATE INDEX violations_by_ord ON violations (ord);
        CREATE INDEX violations_by_code ON violations (code, ord);
        CREATE TABLE idempotency (
            session bigint NOT NULL,
            key text NOT NULL,
            fingerprint bytea NOT NULL,
            response bytea NOT NULL,
            created_ms bigint NOT NULL,
            PRIMARY KEY (session, key)
        );
        CREATE INDEX idempotency_by_age ON idempotency (created_ms);
        """,
        // The row's revision (`StoredVersion`): the last timeline seq, moved by every write,
        // where the contract's version stays put when a timer fires.
        """
        ALTER TABLE sessions ADD COLUMN revision bigint NOT NULL DEFAULT 0;
        UPDATE sessions s SET revision = coalesce((SELECT max(seq) FROM timeline t WHERE t.session = s.ord), 0);
        """,
    ]

    /// Creates or migrates the schema; refuses (exit 2 at the caller) a database a newer
    /// todaysim wrote.
    static func migrate(_ connection: PostgresConnection) throws(StoreError) {
        // Waiting for another server's migration, or one that rewrites a large table, takes
        // longer than a request's statement may: bounded still, so a frozen database at start
        // ends the start with an error instead of hanging it.
        let requestDeadline = connection.deadline
        connection.deadline = migrationDeadline
        defer { connection.deadline = requestDeadline }
        do {
            _ = try connection.execute("SELECT pg_advisory_lock($1)", [.int64(migrationLock)])
            defer { _ = try? connection.execute("SELECT pg_advisory_unlock($1)", [.int64(migrationLock)]) }
            _ = try connection.execute("CREATE TABLE IF NOT EXISTS todaysim_schema (version bigint NOT NULL)")
            let found = try connection.execute("SELECT max(version) FROM todaysim_schema")
            let version = found.isNull(0, 0) ? 0 : try found.int64(0, 0)
            guard version <= currentVersion else { throw StoreError.newerSchema(found: version, supported: currentVersion) }
            for next in Int(version)..<migrations.count {
                try connection.transaction {
                    _ = try connection.execute(migrations[next])
                    _ = try connection.execute("INSERT INTO todaysim_schema (version) VALUES ($1)", [.int(next + 1)])
                }
            }
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresError {
            throw .postgres(error)
        } catch {
            throw .storageUnavailable("\(error)")
        }
    }
}

/// Every statement a PostgreSQL connection prepares, by name, as SQLite's are in
/// `SQLite/StoreStatements.swift`.
extension PostgresTransaction {
    /// Locks taken so that cursors (`ord` of sessions and violations) grow in commit order:
    /// with several writers a sequence value is drawn at insert time but becomes visible at
    /// commit, so a reader paging by `ord` could pass a lower value that commits later and
    /// skip it. Inserting sessions (and violations) under one transaction-scoped advisory lock
    /// serializes those inserts until commit; their commits, and so their `ord`s, are ordered.
    static let sessionOrderLock: Int64 = 0x5444_534D_0002
    static let violationOrderLock: Int64 = 0x5444_534D_0003

    static let statements: [(name: String, sql: String)] = [
        ("select_session", "SELECT ord, wall_origin_ms, state FROM sessions WHERE id = $1 AND closed < 2"),
        ("lock_sessions", "SELECT id, ord, revision FROM sessions WHERE id = ANY($1::text[]) AND closed < 2 ORDER BY id FOR UPDATE"),
        ("session_versions", "SELECT id, ord, revision FROM sessions WHERE id = ANY($1::text[]) AND closed < 2"),
        ("insert_session", """
            INSERT INTO sessions (id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms, last_active_ms,
                                  revision)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ord
            """),
        ("update_uid", "UPDATE sessions SET uid = $1 WHERE ord = $2"),
        ("update_sessions", """
            UPDATE sessions s SET closed = u.closed, next_due_ms = u.next_due_ms, version = u.version, state = u.state,
                last_active_ms = u.now_ms, revision = u.revision,
                closed_at_ms = CASE WHEN u.closed = 1 THEN coalesce(s.closed_at_ms, u.now_ms) ELSE NULL END
            FROM unnest($1::bigint[], $2::smallint[], $3::bigint[], $4::bigint[], $5::bytea[], $6::bigint[], $7::bigint[],
                        $8::bigint[])
                AS u(ord, closed, next_due_ms, version, state, now_ms, expected, revision)
            WHERE s.ord = u.ord AND s.closed < 2 AND (u.expected IS NULL OR s.revision = u.expected)
            """),
        ("insert_timeline", """
            INSERT INTO timeline (session, seq, kind, entry)
            SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::bytea[])
            """),
        // In the order given (WITH ORDINALITY): violation ords follow the entries' order.
        ("insert_violations", """
            INSERT INTO violations (session, seq, code)
            SELECT session, seq, code FROM unnest($1::bigint[], $2::int[], $3::text[]) WITH ORDINALITY AS v(session, seq, code, n)
            ORDER BY n
            """),
        ("upsert_records", """
            INSERT INTO requests (session, request_id, record)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
            ON CONFLICT (session, request_id) DO UPDATE SET record = excluded.record
            """),
        ("notify", "SELECT pg_notify(channel, payload) FROM unnest($1::text[], $2::text[]) AS n(channel, payload)"),
        ("select_records", "SELECT request_id, record FROM requests WHERE session = $1 AND request_id = ANY($2::text[])"),
        ("select_idempotency", "SELECT fingerprint, response FROM idempotency WHERE session = $1 AND key = $2"),
        ("insert_idempotency", "INSERT INTO idempotency (session, key, fingerprint, response, created_ms) VALUES ($1, $2, $3, $4, $5)"),
        ("reclaim_idempotency", "DELETE FROM idempotency WHERE session = $1"),
        ("purge_idempotency", "DELETE FROM idempotency WHERE created_ms <= $1"),
        ("sessions_to_purge", "SELECT ord, id FROM sessions WHERE closed < 2 AND ($1::text IS NULL OR label = $1) ORDER BY id FOR UPDATE"),
        ("closed_sessions", "SELECT ord, id FROM sessions WHERE closed_at_ms IS NOT NULL AND closed_at_ms <= $1 AND closed < 2 ORDER BY id FOR UPDATE"),
        ("hide_session", """
            UPDATE sessions SET closed = 2, id = 'removing/' || ord, uid = '', label = NULL, next_due_ms = NULL,
                ttl_ms = NULL, closed_at_ms = NULL WHERE ord = $1
            """),
        ("reclaim_timeline", "DELETE FROM timeline WHERE session = $1 AND seq <= (SELECT min(seq) FROM timeline WHERE session = $1) + $2"),
        ("reclaim_violations", "DELETE FROM violations WHERE session = $1 AND seq <= (SELECT min(seq) FROM violations WHERE session = $1) + $2"),
        ("reclaim_requests", """
            DELETE FROM requests WHERE session = $1
                AND request_id IN (SELECT request_id FROM requests WHERE session = $1 LIMIT $2)
            """),
        ("delete_session", "DELETE FROM sessions WHERE ord = $1"),
        ("session_status", "SELECT closed FROM sessions WHERE ord = $1"),
        ("copy_requests", "INSERT INTO requests (session, request_id, record) SELECT $1, request_id, record FROM requests WHERE session = $2"),
        ("copy_timeline", """
            INSERT INTO timeline (session, seq, kind, entry)
                SELECT $1, seq, kind, entry FROM timeline WHERE session = $2 AND seq > $3 AND seq <= $4
            """),
        ("copy_violations", """
            INSERT INTO violations (session, seq, code)
                SELECT $1, seq, code FROM violations WHERE session = $2 AND seq > $3 AND seq <= $4 ORDER BY seq
            """),
        ("reveal_session", """
            UPDATE sessions SET id = $1, uid = $2, label = $3, closed = $4::smallint, next_due_ms = $5, version = $8, state = $9,
                closed_at_ms = CASE WHEN $4::smallint = 1 THEN $7::bigint ELSE NULL END WHERE ord = $6
            """),
        ("order_lock", "SELECT pg_advisory_xact_lock($1)"),
        // Reads.
        ("session_counts", "SELECT closed, count(*) FROM sessions WHERE closed < 2 GROUP BY closed"),
        ("list_sessions", """
            SELECT ord, wall_origin_ms, state FROM sessions
            WHERE ord > $1 AND closed < 2 AND ($2::text IS NULL OR uid = $2) AND ($3::text IS NULL OR label = $3)
                AND ($4::smallint IS NULL OR closed = $4)
            ORDER BY ord LIMIT $5
            """),
        ("timeline_page", """
            SELECT seq, entry FROM timeline WHERE session = $1 AND seq > $2 AND ($3::text IS NULL OR kind = $3)
            ORDER BY seq LIMIT $4
            """),
        // A page and whether its session is still stored under `ord`, in one statement (one
        // snapshot, one round trip): always one row at least, `(stored 0|1, NULL, NULL)` when there
        // is no entry to send.
        ("stored_timeline_page", """
            SELECT s.stored::int, t.seq, t.entry
            FROM (SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $5 AND ord = $1 AND closed < 2) AS stored) s
            LEFT JOIN LATERAL (
                SELECT seq, entry FROM timeline WHERE session = $1 AND seq > $2 AND ($3::text IS NULL OR kind = $3)
                ORDER BY seq LIMIT $4
            ) t ON s.stored
            ORDER BY t.seq
            """),
        ("session_ord", "SELECT ord FROM sessions WHERE id = $1 AND closed < 2"),
        ("session_records", "SELECT record FROM requests WHERE session = $1"),
        ("violations_page", """
            SELECT v.ord, s.id, t.entry FROM violations v
            JOIN sessions s ON s.ord = v.session
            JOIN timeline t ON t.session = v.session AND t.seq = v.seq
            WHERE v.ord > $1 AND s.closed < 2 AND ($2::text IS NULL OR s.uid = $2) AND ($3::text IS NULL OR s.label = $3)
                AND ($4::text IS NULL OR v.code = $4)
            ORDER BY v.ord LIMIT $5
            """),
        ("idle_sessions", "SELECT id FROM sessions WHERE closed = 0 AND ttl_ms IS NOT NULL AND last_active_ms + ttl_ms <= $1 LIMIT 500"),
        ("next_idle_expiry", "SELECT min(last_active_ms + ttl_ms) FROM sessions WHERE closed = 0 AND ttl_ms IS NOT NULL"),
        ("earliest_closed_at", "SELECT min(closed_at_ms) FROM sessions WHERE closed_at_ms IS NOT NULL AND closed < 2"),
        ("due_wall_sessions", """
            SELECT id FROM sessions WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL
                AND wall_origin_ms + next_due_ms <= (SELECT coalesce($1::bigint, \(databaseNow)))
            ORDER BY wall_origin_ms + next_due_ms
            """),
        ("next_wall_due", """
            SELECT wall_origin_ms + next_due_ms FROM sessions WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL
            ORDER BY wall_origin_ms + next_due_ms LIMIT 1
            """),
        ("hidden_rows", "SELECT count(*) FROM sessions WHERE closed = 2"),
        ("next_removing", "SELECT ord FROM sessions WHERE closed = 2 AND id LIKE 'removing/%' ORDER BY ord LIMIT 1"),
    ]
}

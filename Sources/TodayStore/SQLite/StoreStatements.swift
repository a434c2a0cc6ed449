/// The store's prepared statements, prepared once per connection.
final class StoreStatements {
    let insertSession: Statement
    let updateSession: Statement
    let selectSession: Statement
    let lastInsertOrd: Statement
    let insertEntry: Statement
    let selectRecord: Statement
    let selectRecords: Statement
    let upsertRecord: Statement
    let timelinePage: Statement
    let timelinePageOfKind: Statement
    let listSessions: Statement
    let nextWallDue: Statement
    let dueWallSessions: Statement
    let begin: Statement
    let commit: Statement
    let rollback: Statement
    let savepoint: Statement
    let releaseSavepoint: Statement
    let rollbackToSavepoint: Statement
    let updateUid: Statement
    let idleSessions: Statement
    let nextIdleExpiry: Statement
    let expiredRetention: Statement
    let earliestClosedAt: Statement
    let selectIdempotency: Statement
    let insertIdempotency: Statement
    let purgeIdempotency: Statement
    let reclaimIdempotency: Statement
    let insertViolation: Statement
    let sessionRecords: Statement
    let violationsPage: Statement
    let sessionsToPurge: Statement
    let purgeSession: Statement
    let copyRequests: Statement
    let sessionsByStatus: Statement
    /// Removal in small transactions (`closed = 2`: being removed or being forked, hidden from
    /// every read; the id renamed so it is free at once).
    let hideSession: Statement
    let nextRemoving: Statement
    let hiddenRows: Statement
    let reclaimTimeline: Statement
    let reclaimViolations: Statement
    let reclaimRequests: Statement
    let sessionStatus: Statement
    let copyTimelineRange: Statement
    let copyViolationsRange: Statement
    let revealSession: Statement
    let sessionOrd: Statement
    let sessionVersion: Statement
    /// A write that changes nothing but page 1 (the schema version it already has): the
    /// smallest write that needs room on disk, for probing a degraded store.
    let touchMarker: Statement

    init(_ database: Database) throws(SQLiteError) {
        insertSession = try database.prepare("""
            INSERT INTO sessions (id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state, ttl_ms, last_active_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        // `uid` is indexed and changes only on an account switch: it has its own statement.
        updateSession = try database.prepare("""
            UPDATE sessions SET closed = ?1, next_due_ms = ?2, version = ?3, state = ?4, last_active_ms = ?6,
                closed_at_ms = CASE WHEN ?1 = 1 THEN coalesce(closed_at_ms, ?6) ELSE NULL END
            WHERE ord = ?5 AND closed < 2
            """)
        idleSessions = try database.prepare(
            "SELECT id FROM sessions WHERE closed = 0 AND ttl_ms IS NOT NULL AND last_active_ms + ttl_ms <= ? LIMIT 500")
        nextIdleExpiry = try database.prepare(
            "SELECT min(last_active_ms + ttl_ms) FROM sessions WHERE closed = 0 AND ttl_ms IS NOT NULL")
        selectIdempotency = try database.prepare("SELECT fingerprint, response FROM idempotency WHERE session = ? AND key = ?")
        insertIdempotency = try database.prepare(
            "INSERT INTO idempotency (session, key, fingerprint, response, created_ms) VALUES (?, ?, ?, ?, ?)")
        reclaimIdempotency = try database.prepare("DELETE FROM idempotency WHERE session = ?")
        purgeIdempotency = try database.prepare("DELETE FROM idempotency WHERE created_ms <= ?")
        touchMarker = try database.prepare("PRAGMA user_version = \(Schema.currentVersion)")
        earliestClosedAt = try database.prepare("SELECT min(closed_at_ms) FROM sessions WHERE closed_at_ms IS NOT NULL")
        expiredRetention = try database.prepare("SELECT ord, id FROM sessions WHERE closed_at_ms IS NOT NULL AND closed_at_ms <= ?")
        updateUid = try database.prepare("UPDATE sessions SET uid = ? WHERE ord = ?")
        insertViolation = try database.prepare("INSERT INTO violations (session, seq, code) VALUES (?, ?, ?)")
        sessionsToPurge = try database.prepare("SELECT ord, id FROM sessions WHERE closed < 2 AND (? IS NULL OR label = ?)")
        hideSession = try database.prepare("""
            UPDATE sessions SET closed = 2, id = 'removing/' || ord, uid = '', label = NULL, next_due_ms = NULL,
                ttl_ms = NULL, closed_at_ms = NULL WHERE ord = ?
            """)
        hiddenRows = try database.prepare("SELECT count(*) FROM sessions WHERE closed = 2")
        nextRemoving = try database.prepare(
            "SELECT ord FROM sessions WHERE closed = 2 AND substr(id, 1, 9) = 'removing/' ORDER BY ord LIMIT 1")
        reclaimTimeline = try database.prepare(
            "DELETE FROM timeline WHERE session = ?1 AND seq <= (SELECT min(seq) FROM timeline WHERE session = ?1) + ?2")
        reclaimViolations = try database.prepare(
            "DELETE FROM violations WHERE session = ?1 AND seq <= (SELECT min(seq) FROM violations WHERE session = ?1) + ?2")
        reclaimRequests = try database.prepare("""
            DELETE FROM requests WHERE session = ?1
                AND request_id IN (SELECT request_id FROM requests WHERE session = ?1 LIMIT ?2)
            """)
        sessionStatus = try database.prepare("SELECT closed FROM sessions WHERE ord = ?")
        copyTimelineRange = try database.prepare("""
            INSERT INTO timeline (session, seq, kind, entry)
                SELECT ?1, seq, kind, entry FROM timeline WHERE session = ?2 AND seq > ?3 AND seq <= ?4
            """)
        copyViolationsRange = try database.prepare("""
            INSERT INTO violations (session, seq, code)
                SELECT ?1, seq, code FROM violations WHERE session = ?2 AND seq > ?3 AND seq <= ?4 ORDER BY seq
            """)
        revealSession = try database.prepare("""
            UPDATE sessions SET id = ?1, uid = ?2, label = ?3, closed = ?4, next_due_ms = ?5, version = ?8, state = ?9,
                closed_at_ms = CASE WHEN ?4 = 1 THEN ?7 ELSE NULL END WHERE ord = ?6
            """)
        sessionOrd = try database.prepare("SELECT ord FROM sessions WHERE id = ? AND closed < 2")
        // The revision (`StoredVersion`): the last timeline seq, which the row does not hold here.
        sessionVersion = try database.prepare("""
            SELECT ord, (SELECT coalesce(max(seq), 0) FROM timeline WHERE session = s.ord)
            FROM sessions s WHERE id = ? AND closed < 2
            """)
        purgeSession = try database.prepare("DELETE FROM sessions WHERE ord = ?")
        copyRequests = try database.prepare("INSERT INTO requests (session, request_id, record) SELECT ?, request_id, record FROM requests WHERE session = ?")
        sessionsByStatus = try database.prepare("SELECT closed, count(*) FROM sessions WHERE closed < 2 GROUP BY closed")
        sessionRecords = try database.prepare("SELECT record FROM requests WHERE session = ?")
        violationsPage = try database.prepare("""
            SELECT v.ord, s.id, t.entry FROM violations v
            JOIN sessions s ON s.ord = v.session
            JOIN timeline t ON t.session = v.session AND t.seq = v.seq
            WHERE v.ord > ? AND s.closed < 2 AND (? IS NULL OR s.uid = ?) AND (? IS NULL OR s.label = ?) AND (? IS NULL OR v.code = ?)
            ORDER BY v.ord LIMIT ?
            """)
        begin = try database.prepare("BEGIN IMMEDIATE")
        commit = try database.prepare("COMMIT")
        rollback = try database.prepare("ROLLBACK")
        savepoint = try database.prepare("SAVEPOINT steps")
        releaseSavepoint = try database.prepare("RELEASE steps")
        rollbackToSavepoint = try database.prepare("ROLLBACK TO steps")
        selectSession = try database.prepare("SELECT ord, wall_origin_ms, state FROM sessions WHERE id = ?")
        lastInsertOrd = try database.prepare("SELECT last_insert_rowid()")
        insertEntry = try database.prepare("INSERT INTO timeline (session, seq, kind, entry) VALUES (?, ?, ?, ?)")
        selectRecord = try database.prepare("SELECT request_id, record FROM requests WHERE session = ? AND request_id = ?")
        selectRecords = try database.prepare(
            "SELECT request_id, record FROM requests WHERE session = ? AND request_id IN (SELECT value FROM json_each(?))")
        upsertRecord = try database.prepare("""
            INSERT INTO requests (session, request_id, record) VALUES (?, ?, ?)
            ON CONFLICT (session, request_id) DO UPDATE SET record = excluded.record
            """)
        timelinePage = try database.prepare(
            "SELECT seq, entry FROM timeline WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?")
        timelinePageOfKind = try database.prepare(
            "SELECT seq, entry FROM timeline WHERE session = ? AND seq > ? AND kind = ? ORDER BY seq LIMIT ?")
        listSessions = try database.prepare("""
            SELECT ord, wall_origin_ms, state FROM sessions
            WHERE ord > ? AND closed < 2 AND (? IS NULL OR uid = ?) AND (? IS NULL OR label = ?) AND (? IS NULL OR closed = ?)
            ORDER BY ord LIMIT ?
            """)
        nextWallDue = try database.prepare("""
            SELECT wall_origin_ms + next_due_ms FROM sessions
            WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL
            ORDER BY wall_origin_ms + next_due_ms LIMIT 1
            """)
        dueWallSessions = try database.prepare("""
            SELECT id FROM sessions
            WHERE clock = 'wall' AND closed = 0 AND next_due_ms IS NOT NULL AND wall_origin_ms + next_due_ms <= ?
            ORDER BY wall_origin_ms + next_due_ms
            """)
    }

    /// Session `id` as stored (a hidden one is renamed, so never found), for the writer and the
    /// reader alike.
    func sessionRow(id: String) throws(SQLiteError) -> SessionRow? {
        try selectSession.rows([.text(id)]) { SessionRow(ord: $0.int64(0), wallOriginMs: $0.int64(1), state: $0.blob(2)) }.first
    }
}

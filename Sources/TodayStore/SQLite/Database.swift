import CSQLite

/// Owns one SQLite connection. Not thread-safe: its owner serializes access.
package final class Database {
    let handle: OpaquePointer
    package let path: String

    /// Opens (creating when missing) the database at `path`; `:memory:` for a throwaway one.
    /// `flags`: SQLite's open flags, e.g. read-only on a `file:` URI.
    package init(path: String,
                flags: Int32 = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX) throws(SQLiteError) {
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(connection)
            throw SQLiteError(code: code, message: message, sql: nil)
        }
        handle = connection
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    func error(_ code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql,
                    systemErrno: sqlite3_system_errno(handle))
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
    }

    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// The single integer a query such as `PRAGMA user_version` answers.
    package func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { throw SQLiteError(code: SQLITE_MISUSE, message: "no row", sql: sql) }
        return statement.int64(0)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether SQLite opened the file read-only (it does so silently when it may not write).
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Whether the file this connection writes to is no longer the one at `path` (deleted,
    /// renamed or replaced): commits would go to a file nobody will open again.
    package var fileHasMoved: Bool {
        var moved: Int32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK else { return false }
        return moved != 0
    }
}

import CSQLite

/// Every failed SQLite call: the result code, SQLite's message and the statement.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var sql: String?

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }

    /// `SQLITE_BUSY`/`SQLITE_LOCKED`: another connection holds the database.
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
}

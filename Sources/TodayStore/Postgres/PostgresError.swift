/// Every failed libpq call: PostgreSQL's SQLSTATE (when the server sent one), the message, the
/// statement, and whether the connection is gone (then only a new connection helps).
package struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE, e.g. `23505`; nil when libpq itself failed (no server answer).
    package var sqlState: String?
    package var message: String
    package var sql: String?
    /// `PQstatus` was `CONNECTION_BAD` after the failure.
    package var connectionBroken: Bool

    package init(sqlState: String?, message: String, sql: String? = nil, connectionBroken: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
        self.connectionBroken = connectionBroken
    }

    package var description: String {
        var text = "PostgreSQL error"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(message)"
        if connectionBroken { text += " (connection lost)" }
        if let sql { text += " (in: \(sql))" }
        return text
    }

    /// `40001`: a `SERIALIZABLE` (or `REPEATABLE READ`) transaction lost to a concurrent one;
    /// running the whole transaction again is the answer.
    package var isSerializationFailure: Bool { sqlState == "40001" }

    /// `40P01`: PostgreSQL broke a lock cycle by aborting this transaction; run it again.
    package var isDeadlock: Bool { sqlState == "40P01" }

    /// `23505`: a unique index already holds the key.
    package var isUniqueViolation: Bool { sqlState == "23505" }

    /// The database is out of reach: the connection broke, the server refused or ended it
    /// (class 08), or it is shutting down or starting (`57P01`…`57P03`). Another connection,
    /// later, may work; the statement's effect is unknown unless it never left.
    package var isConnectionLost: Bool {
        guard !connectionBroken else { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }
}

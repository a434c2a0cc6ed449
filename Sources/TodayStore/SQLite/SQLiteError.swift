import CSQLite
import Glibc

/// Every failed SQLite call: the result code, SQLite's message and the statement.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var sql: String?
    /// The OS error behind an I/O failure (`sqlite3_system_errno`), 0 when none.
    public var systemErrno: Int32 = 0

    public init(code: Int32, message: String, sql: String?, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }

    /// `SQLITE_BUSY`/`SQLITE_LOCKED`: another connection holds the database.
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }

    /// No room to write: `SQLITE_FULL`, or an I/O error whose cause is a full disk, a quota or
    /// the process's file size limit (a write past `RLIMIT_FSIZE` fails with `EFBIG`).
    public var isFull: Bool {
        code & 0xFF == SQLITE_FULL || (code & 0xFF == SQLITE_IOERR && [ENOSPC, EFBIG, EDQUOT].contains(systemErrno))
    }

    /// The file itself cannot be written or read as it should: an I/O error, a read-only or
    /// vanished file, damage.
    public var isStorageFailure: Bool {
        [SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB].contains(code & 0xFF)
    }
}

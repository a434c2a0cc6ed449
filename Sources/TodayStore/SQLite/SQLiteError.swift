import CSQLite
import Glibc

/// Every failed SQLite call: the result code, SQLite's message and the statement.
package struct SQLiteError: Error, CustomStringConvertible, Sendable {
    package var code: Int32
    package var message: String
    package var sql: String?
    /// The OS error behind an I/O failure (`sqlite3_system_errno`), 0 when none.
    package var systemErrno: Int32 = 0

    package init(code: Int32, message: String, sql: String?, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    package var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }

    /// `SQLITE_BUSY`/`SQLITE_LOCKED`: another connection holds the database.
    package var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }

    /// No room to write: `SQLITE_FULL`, or an I/O error whose cause is a full disk, a quota or
    /// the process's file size limit (a write past `RLIMIT_FSIZE` fails with `EFBIG`).
    package var isFull: Bool {
        code & 0xFF == SQLITE_FULL || (code & 0xFF == SQLITE_IOERR && [ENOSPC, EFBIG, EDQUOT].contains(systemErrno))
    }

    /// The file itself cannot be written or read as it should: an I/O error, a read-only or
    /// vanished file, damage.
    package var isStorageFailure: Bool {
        [SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB].contains(code & 0xFF)
    }
}

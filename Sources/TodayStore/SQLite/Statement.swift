import CSQLite

/// A value bound to a statement parameter.
package enum SQLiteValue: Sendable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    package static func text(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
    package static func integer(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }
}

/// A prepared statement, prepared once and reset between uses.
package final class Statement {
    let handle: OpaquePointer
    let sql: String
    private let database: Database

    init(database: Database, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw database.error(code, sql: sql) }
        handle = statement
        self.sql = sql
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `values` to its parameters in order.
    @discardableResult
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case let .integer(number): code = sqlite3_bind_int64(handle, index, number)
            case let .text(text): code = sqlite3_bind_text(handle, index, text, -1, todaysim_sqlite_transient())
            case let .blob(bytes):
                code = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), todaysim_sqlite_transient())
                }
            }
            guard code == SQLITE_OK else { throw database.error(code, sql: sql) }
        }
        return self
    }

    /// Advances to the next row; `false` when done.
    package func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw database.error(code, sql: sql)
        }
    }

    /// Runs a statement that returns no rows.
    package func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Every row, read by `row`.
    package func rows<T>(_ values: [SQLiteValue] = [], _ row: (Statement) -> T) throws(SQLiteError) -> [T] {
        try bind(values)
        var result: [T] = []
        while try step() { result.append(row(self)) }
        sqlite3_reset(handle)
        return result
    }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    package func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    package func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: pointer)
    }

    package func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

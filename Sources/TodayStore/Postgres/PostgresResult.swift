import CPostgres

/// The rows (or the command tag) of one successful statement; owns its `PGresult`.
///
/// Statements with parameters return binary values (bytea arrives as its raw bytes, integers as
/// big-endian words); `execute` without parameters returns text. The readers accept both, by the
/// column's format and type, so a caller never cares which path ran its statement.
package final class PostgresResult {
    let handle: OpaquePointer
    let sql: String

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit {
        PQclear(handle)
    }

    package var rowCount: Int { Int(PQntuples(handle)) }

    package var columnCount: Int { Int(PQnfields(handle)) }

    /// Rows an `INSERT`/`UPDATE`/`DELETE` touched (0 for other commands): a conditional update
    /// (`… WHERE version = $2`) reads 0 here when another writer got there first.
    package var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// The command tag, e.g. `COMMIT`, or `ROLLBACK` for a `COMMIT` of a failed transaction.
    package var commandStatus: String { String(cString: PQcmdStatus(handle)) }

    package func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// An `int2`, `int4` or `int8` column.
    package func int64(_ row: Int, _ column: Int) throws(PostgresError) -> Int64 {
        let raw = try value(row, column)
        guard isBinary(column) else {
            guard let number = Int64(String(decoding: raw, as: UTF8.self)) else {
                throw mismatch(column, "an integer", found: "'\(String(decoding: raw, as: UTF8.self))'")
            }
            return number
        }
        let type = PQftype(handle, Int32(column))
        let width: Int
        switch type {
        case PostgresValue.TypeOID.int8: width = 8
        case PostgresValue.TypeOID.int4: width = 4
        case PostgresValue.TypeOID.int2: width = 2
        default: throw mismatch(column, "an integer", found: "type \(type)")
        }
        guard raw.count == width else { throw mismatch(column, "\(width) bytes", found: "\(raw.count)") }
        // Big-endian two's complement: sign-extend from the first byte.
        var number = Int64(Int8(bitPattern: raw[raw.startIndex]))
        for byte in raw.dropFirst() { number = number << 8 | Int64(byte) }
        return number
    }

    /// A text-like column (`text`, `varchar`, `name`, `json`); from a text-format result, any
    /// column as PostgreSQL prints it.
    package func text(_ row: Int, _ column: Int) throws(PostgresError) -> String {
        let raw = try value(row, column)
        let type = PQftype(handle, Int32(column))
        // In binary format these types are their UTF-8 text, nothing else is.
        guard !isBinary(column) || PostgresValue.TypeOID.textLike.contains(type) else {
            throw mismatch(column, "text", found: "type \(type)")
        }
        return String(decoding: raw, as: UTF8.self)
    }

    /// A `bytea` column's bytes.
    package func bytes(_ row: Int, _ column: Int) throws(PostgresError) -> [UInt8] {
        let type = PQftype(handle, Int32(column))
        guard type == PostgresValue.TypeOID.bytea else { throw mismatch(column, "bytea", found: "type \(type)") }
        let raw = try value(row, column)
        guard !isBinary(column) else { return Array(raw) }
        // Text format is the hex (or escape) form, which libpq decodes.
        var count = 0
        guard let decoded = PQunescapeBytea(Array(raw) + [0], &count) else {
            throw PostgresError(sqlState: nil, message: "cannot decode bytea column \(column)", sql: sql)
        }
        defer { PQfreemem(decoded) }
        return Array(UnsafeBufferPointer(start: decoded, count: count))
    }

    private func isBinary(_ column: Int) -> Bool { PQfformat(handle, Int32(column)) == 1 }

    /// The value's bytes as the server sent them; NULL and out-of-range cells are errors.
    private func value(_ row: Int, _ column: Int) throws(PostgresError) -> ArraySlice<UInt8> {
        guard row >= 0, row < rowCount, column >= 0, column < columnCount else {
            throw PostgresError(sqlState: nil, message: "no cell (\(row), \(column)) in \(rowCount)×\(columnCount)", sql: sql)
        }
        guard !isNull(row, column) else {
            throw PostgresError(sqlState: nil, message: "column \(column) of row \(row) is NULL", sql: sql)
        }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard length > 0, let pointer = PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
        return ArraySlice(UnsafeRawBufferPointer(start: pointer, count: length).bindMemory(to: UInt8.self))
    }

    private func mismatch(_ column: Int, _ expected: String, found: String) -> PostgresError {
        PostgresError(sqlState: nil, message: "column \(column) is not \(expected) (\(found))", sql: sql)
    }
}

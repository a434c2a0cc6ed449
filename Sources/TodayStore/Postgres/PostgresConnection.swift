import CPostgres
import Glibc

/// Owns one libpq connection. Not thread-safe: its owner serializes access (libpq allows one
/// statement in flight per connection).
package final class PostgresConnection {
    let handle: OpaquePointer
    /// Where this connects to, password masked: what errors and logs may show.
    package let target: String
    /// How long one statement may take, from sending it to its last result; `nil`: no limit.
    /// Past it the connection is given up (`isBroken`), whatever the server does later — see
    /// `PostgresConnection+Deadline.swift`.
    package var deadline: Duration?
    /// What `deadline` is measured on: this machine's clock, or a test's (`ManualTime`).
    let time: any TimeSource
    /// Set when a statement outlived `deadline`: the connection is mid-statement, unusable.
    var abandoned = false

    /// Connects to `uri` (a libpq URI or `key=value` string). `connectTimeout` (seconds) bounds
    /// each attempt against an unreachable host; the string's own `connect_timeout` wins, as it
    /// does over `defaults` (other libpq keywords). `deadline`: see `deadline`; `time`: what it
    /// is measured on.
    package init(uri: String, connectTimeout: Int = 10, defaults: [(String, String)] = [],
                deadline: Duration? = nil, time: any TimeSource = SystemTime()) throws(PostgresError) {
        let connectionString = ConnectionString(uri)
        // Arrays are read in order and a later keyword wins, so the expanded `dbname` (the whole
        // string) overrides the defaults given before it.
        let keywords = ["connect_timeout", "application_name"] + defaults.map(\.0) + ["dbname"]
        let values = [String(max(connectTimeout, 1)), "todaysim"] + defaults.map(\.1) + [uri]
        let connection = withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.lastMessage($0) } ?? "out of memory"
            PQfinish(connection)
            throw PostgresError(sqlState: nil,
                                message: "cannot connect to \(connectionString.redacted): \(connectionString.scrubbed(message))",
                                connectionBroken: true)
        }
        // Non-blocking, so that every wait for the server is this type's own `poll`, bounded
        // by `deadline` (and `PQfinish` never blocks on a full socket either).
        guard PQsetnonblocking(connection, 1) == 0 else {
            let message = Self.lastMessage(connection)
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: "cannot make the connection non-blocking: \(message)", connectionBroken: true)
        }
        handle = connection
        target = connectionString.redacted
        self.deadline = deadline
        self.time = time
        // libpq prints NOTICE/WARNING messages to stderr by default; they are not errors and the
        // service's log is its own.
        PQsetNoticeReceiver(handle, { _, _ in }, nil)
    }

    deinit {
        PQfinish(handle)
    }

    /// `uri` with its password masked, for messages and logs.
    package static func redacted(_ uri: String) -> String { ConnectionString(uri).redacted }

    /// Whether the connection is gone (`CONNECTION_BAD`): every statement will fail; open another.
    package var isBroken: Bool { abandoned || PQstatus(handle) == CONNECTION_BAD }

    /// Runs `sql`. Without parameters it may hold several statements (the result is the last
    /// one's, in text format); with parameters it is one statement and its result is binary.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        if parameters.isEmpty {
            return try exchange(sql) { PQsendQuery(handle, sql) }
        }
        return try exchange(sql) {
            PostgresParameters.withParameters(parameters) { count, types, values, lengths, formats in
                PQsendQueryParams(handle, sql, count, types, values, lengths, formats, 1)
            }
        }
    }

    /// Prepares `sql` once as `name` for `run`; parameter types are inferred from the statement
    /// (a `.bytes` parameter must stand where `bytea` is expected, e.g. a `bytea` column or `$1::bytea`).
    package func prepare(_ name: String, _ sql: String) throws(PostgresError) {
        try exchange(sql) { PQsendPrepare(handle, name, sql, 0, nil) }
        prepared[name] = sql
    }

    /// Runs the statement prepared as `name`; the result is binary.
    @discardableResult
    package func run(_ name: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresResult {
        let sql = prepared[name] ?? "prepared statement \(name)"
        return try exchange(sql) {
            PostgresParameters.withParameters(parameters) { count, _, values, lengths, formats in
                PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
            }
        }
    }

    /// The SQL of each prepared statement, for error messages.
    private var prepared: [String: String] = [:]

    /// The result of a statement, or its failure as a `PostgresError`.
    @discardableResult
    func checked(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
        guard let result else {
            throw PostgresError(sqlState: nil, message: Self.lastMessage(handle), sql: sql, connectionBroken: isBroken)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(handle: result, sql: sql)
        default:
            let sqlState = PQresultErrorField(result, todaysim_pg_diag_sqlstate()).map { String(cString: $0) }
            var message = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
            if message.isEmpty { message = "unexpected result \(String(cString: PQresStatus(PQresultStatus(result))))" }
            PQclear(result)
            throw PostgresError(sqlState: sqlState, message: Self.trimmed(message), sql: sql, connectionBroken: isBroken)
        }
    }

    static func lastMessage(_ connection: OpaquePointer) -> String {
        trimmed(PQerrorMessage(connection).map { String(cString: $0) } ?? "")
    }

    /// libpq's messages end in a newline and may span lines; an error is one line of a log.
    private static func trimmed(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " ")
    }
}

/// `strings` as a NULL-terminated array of C strings, valid inside `body`.
private func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
}

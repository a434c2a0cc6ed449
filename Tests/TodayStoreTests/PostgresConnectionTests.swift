import Foundation
import Testing
import TodayStore
import TodayTestSupport

/// The libpq owner against a real PostgreSQL: each test in a database of its own.
@Suite struct PostgresConnectionTests {
    @Test func preparedStatementsTakeTextAndBinaryParametersAndReadBackBothFormats() throws {
        try withConnection("CREATE TABLE sessions (id text PRIMARY KEY, version bigint NOT NULL, state bytea NOT NULL)") { connection in
            try connection.prepare("insert", "INSERT INTO sessions (id, version, state) VALUES ($1, $2, $3)")
            try connection.prepare("read", "SELECT id, version, state FROM sessions WHERE id = $1")
            try connection.run("insert", [.text("s1"), .int64(7), .bytes([1, 0, 2])])
            try connection.run("insert", [.text("s2"), .int64(8), .bytes([0xFF])])

            let binary = try connection.run("read", [.text("s2")])
            #expect(binary.rowCount == 1 && binary.columnCount == 3)
            #expect(try binary.text(0, 0) == "s2")
            #expect(try binary.int64(0, 1) == 8)
            #expect(try binary.bytes(0, 2) == [0xFF])

            // Without parameters the result is text: integers parsed, bytea unescaped from hex.
            let text = try connection.execute("SELECT id, version, state FROM sessions ORDER BY id")
            #expect(text.rowCount == 2)
            #expect(try text.text(1, 0) == "s2")
            #expect(try text.int64(0, 1) == 7)
            #expect(try text.bytes(0, 2) == [1, 0, 2])
            #expect(throws: PostgresError.self) { try text.bytes(0, 1) }
            #expect(throws: PostgresError.self) { try binary.int64(0, 0) }
        }
    }

    @Test func byteaRoundTripsRandomBytesWithZeros() throws {
        try withConnection("CREATE TABLE blobs (id bigint PRIMARY KEY, state bytea NOT NULL)") { connection in
            try connection.prepare("put", "INSERT INTO blobs (id, state) VALUES ($1, $2)")
            try connection.prepare("get", "SELECT state, octet_length(state) FROM blobs WHERE id = $1")
            var random = SystemRandomNumberGenerator()
            var bytes = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) }
            bytes[0] = 0; bytes[1000] = 0; bytes[bytes.count - 1] = 0
            for (id, value) in [bytes, [], [0], [0, 0, 0]].enumerated() {
                try connection.run("put", [.int(id), .bytes(value)])
                let row = try connection.run("get", [.int(id)])
                #expect(try row.int64(0, 1) == Int64(value.count), "the server stored every byte, zeros too")
                #expect(try row.bytes(0, 0) == value)
                #expect(try connection.execute("SELECT state FROM blobs WHERE id = \(id)").bytes(0, 0) == value)
            }
        }
    }

    @Test func int8ExtremesAndIntegerParametersInAnyIntegerContext() throws {
        try withConnection("CREATE TABLE numbers (n bigint NOT NULL, small integer NOT NULL, tiny smallint NOT NULL)") { connection in
            try connection.prepare("put", "INSERT INTO numbers (n, small, tiny) VALUES ($1, $2, $3)")
            for number: Int64 in [.min, .max, 0, -1, 1 << 40] {
                try connection.run("put", [.int64(number), .int(-5), .int(3)])
            }
            let text = try connection.execute("SELECT n FROM numbers ORDER BY n")
            #expect(try (0..<text.rowCount).map { try text.int64($0, 0) } == [.min, -1, 0, 1 << 40, .max])
            let binary = try connection.execute("SELECT n, small, tiny FROM numbers WHERE n <> $1 ORDER BY n", [.int64(42)])
            #expect(try (0..<binary.rowCount).map { try binary.int64($0, 0) } == [.min, -1, 0, 1 << 40, .max])
            #expect(try binary.int64(0, 1) == -5 && binary.int64(0, 2) == 3, "int4 and int2 read as well")
            // Integers go as text, so a parameter the server infers as int4 takes them too.
            try connection.prepare("count", "SELECT count(*) FROM numbers WHERE small = $1 + 0")
            #expect(try connection.run("count", [.int(-5)]).int64(0, 0) == 5)
            #expect(throws: PostgresError.self) { try connection.run("count", [.int64(.max)]) }
        }
    }

    @Test func nullsAreNullBothWays() throws {
        try withConnection("CREATE TABLE t (label text, state bytea, n bigint)") { connection in
            try connection.execute("INSERT INTO t VALUES ($1, $2, $3)", [.text(nil), .null, .null])
            let row = try connection.execute("SELECT label, state, n, label IS NULL FROM t WHERE label IS NOT DISTINCT FROM $1", [.null])
            #expect(row.rowCount == 1)
            #expect(row.isNull(0, 0) && row.isNull(0, 1) && row.isNull(0, 2))
            #expect(!row.isNull(0, 3))
            #expect(throws: PostgresError.self) { try row.text(0, 0) }
            #expect(throws: PostgresError.self) { try row.int64(0, 2) }
        }
    }

    @Test func aFailedStatementRollsBackItsTransactionAndTheConnectionStaysUsable() throws {
        try withConnection("CREATE TABLE t (id bigint PRIMARY KEY)") { connection in
            let error = #expect(throws: PostgresError.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (1)")
                    try connection.execute("INSERT INTO t VALUES (1)")
                }
            }
            #expect(error?.isUniqueViolation == true)
            #expect(try connection.execute("SELECT count(*) FROM t").int64(0, 0) == 0, "the first insert was rolled back")

            // A body that swallows the failure still does not commit: the whole transaction aborted.
            #expect(throws: PostgresError.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (2)")
                    _ = try? connection.execute("SELECT 1 / 0")
                }
            }
            #expect(try connection.execute("SELECT count(*) FROM t").int64(0, 0) == 0)

            let committed = try connection.transaction(.serializable) {
                try connection.execute("INSERT INTO t VALUES (3)").affectedRows
            }
            #expect(committed == 1)
            #expect(try connection.execute("SELECT id FROM t").int64(0, 0) == 3)
        }
    }

    @Test func uniqueViolationAndConditionalUpdateAreTold() throws {
        try withConnection("CREATE TABLE sessions (id text PRIMARY KEY, version bigint NOT NULL)") { connection in
            try connection.execute("INSERT INTO sessions VALUES ('s1', 1)")
            let error = #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO sessions VALUES ($1, 1)", [.text("s1")]) }
            #expect(error?.sqlState == "23505")
            #expect(error?.isUniqueViolation == true && error?.isConnectionLost == false && error?.isDeadlock == false)
            #expect(error?.sql == "INSERT INTO sessions VALUES ($1, 1)")
            let update = "UPDATE sessions SET version = version + 1 WHERE id = $1 AND version = $2"
            #expect(try connection.execute(update, [.text("s1"), .int64(1)]).affectedRows == 1)
            #expect(try connection.execute(update, [.text("s1"), .int64(1)]).affectedRows == 0, "the version moved on")
        }
    }

    @Test func aConcurrentUpdateIsASerializationFailure() throws {
        try TestPostgres.withDatabase { uri in
            let first = try PostgresConnection(uri: uri)
            let second = try PostgresConnection(uri: uri)
            try first.execute("CREATE TABLE t (id bigint PRIMARY KEY, n bigint NOT NULL); INSERT INTO t VALUES (1, 0)")
            let error = #expect(throws: PostgresError.self) {
                try first.transaction(.repeatableRead) {
                    _ = try first.execute("SELECT n FROM t WHERE id = 1")
                    try second.execute("UPDATE t SET n = n + 1 WHERE id = 1")
                    try first.execute("UPDATE t SET n = n + 10 WHERE id = 1")
                }
            }
            #expect(error?.isSerializationFailure == true)
            #expect(try first.execute("SELECT n FROM t").int64(0, 0) == 1)
        }
    }

    /// Runs `body` on a connection to a new database holding `schema`.
    private func withConnection(_ schema: String, _ body: (PostgresConnection) throws -> Void) throws {
        try TestPostgres.withDatabase { uri in
            let connection = try PostgresConnection(uri: uri)
            try connection.execute(schema)
            try body(connection)
        }
    }
}

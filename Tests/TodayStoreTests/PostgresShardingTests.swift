import Foundation
import Testing
import TodayStore
import TodayTestSupport

/// Issue 15, item 7: past one PostgreSQL primary the tables would be distributed by session (a
/// sharding extension such as Citus puts every row of one session on one node). That holds
/// only while every table carries its session's key and every uniqueness rule and index
/// stays inside one session: this reads the schema the server creates and says which do not.
@Suite struct PostgresShardingTests {
    /// Each table's session key: `sessions.ord`, and the `session` column that refers to it.
    static let sessionKey = ["sessions": "ord", "timeline": "session", "requests": "session", "violations": "session",
                             "idempotency": "session"]
    /// The one rule that spans sessions, and why it may: a session id names one session across
    /// the whole store. Sharded, it becomes a small table of its own keyed by `id` (distributed
    /// by `id`, written at create and purge only), which every lookup by id reads first.
    static let allowedAcrossSessions: Set<String> = ["sessions(id)"]

    @Test func everyTableIsKeyedBySessionAndNoRuleSpansSessions() throws {
        try TestPostgres.withDatabase { uri in
            _ = try SessionStore.open(uri)
            let connection = try PostgresConnection(uri: uri)
            let tables = try connection.execute("""
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname <> 'todaysim_schema' ORDER BY 1
                """)
            let names = try (0..<tables.rowCount).map { try tables.text($0, 0) }
            #expect(Set(names) == Set(Self.sessionKey.keys), "every table has a known session key: \(names)")

            // Unique indexes (primary keys and unique constraints among them), with their columns.
            let unique = try connection.execute("""
                SELECT t.relname, string_agg(a.attname, ',' ORDER BY k.position)
                FROM pg_index i
                JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
                JOIN unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON true
                JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                WHERE n.nspname = current_schema() AND i.indisunique AND t.relname <> 'todaysim_schema'
                GROUP BY i.indexrelid, t.relname ORDER BY 1, 2
                """)
            var spanning: Set<String> = []
            for row in 0..<unique.rowCount {
                let table = try unique.text(row, 0), columns = try unique.text(row, 1).split(separator: ",").map(String.init)
                if let key = Self.sessionKey[table], !columns.contains(key) { spanning.insert("\(table)(\(columns.joined(separator: ",")))") }
            }
            #expect(spanning == Self.allowedAcrossSessions, "unique rules that span sessions")

            // Foreign keys and exclusion constraints would tie rows of different sessions (or nodes).
            let ties = try connection.execute("""
                SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
                WHERE n.nspname = current_schema() AND c.contype IN ('f', 'x')
                """)
            #expect(try ties.int64(0, 0) == 0, "no foreign key or exclusion constraint")
        }
    }
}

import Testing
import TodayStore

/// A PostgreSQL password never shows: every spelling of a connection string is masked.
@Suite struct ConnectionStringTests {
    @Test(arguments: [
        ("postgres://user:s3cret@db.example:5432/todaysim", "postgres://user:***@db.example:5432/todaysim"),
        ("postgresql://user:s3cret@db.example/todaysim?sslmode=require", "postgresql://user:***@db.example/todaysim?sslmode=require"),
        ("POSTGRES://user:s3%40cret@db.example/todaysim", "POSTGRES://user:***@db.example/todaysim"),
        ("postgres://user:s3c@ret@db.example/todaysim", "postgres://user:***@db.example/todaysim"),
        ("postgres://user@db.example/todaysim?password=s3cret&sslmode=require", "postgres://user@db.example/todaysim?password=***&sslmode=require"),
        ("postgres://db.example:5432/todaysim?user=u&password=s3cret", "postgres://db.example:5432/todaysim?user=u&password=***"),
        ("host=db.example password=s3cret dbname=todaysim", "host=db.example password=*** dbname=todaysim"),
        ("host=db.example password = 's3 cret\\' x' dbname=todaysim", "host=db.example password = *** dbname=todaysim"),
        ("password=s3cret", "password=***"),
    ])
    func thePasswordIsMasked(_ uri: String, _ shown: String) {
        #expect(PostgresConnection.redacted(uri) == shown)
        #expect(!PostgresConnection.redacted(uri).contains("s3"))
    }

    @Test(arguments: ["postgres://user@db.example:5432/todaysim", "postgres://db.example/todaysim", "host=db.example dbname=todaysim"])
    func aStringWithoutPasswordIsShownAsIs(_ uri: String) {
        #expect(PostgresConnection.redacted(uri) == uri)
    }
}

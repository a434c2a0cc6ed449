/// Transactions on a `PostgresConnection`.
extension PostgresConnection {
    /// How much a transaction sees of concurrent ones (PostgreSQL's default is read committed).
    package enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` inside `BEGIN … COMMIT`, rolling back when it throws. In PostgreSQL one failed
    /// statement aborts the whole transaction (later ones fail with `25P02` and `COMMIT` quietly
    /// rolls back), so a body that catches a statement's error and goes on still ends in an
    /// error here rather than in a commit that did not happen.
    package func transaction<T>(_ isolation: Isolation = .readCommitted, _ body: () throws -> T) throws -> T {
        try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
        do {
            let result = try body()
            let commit = try execute("COMMIT")
            guard commit.commandStatus == "COMMIT" else {
                throw PostgresError(sqlState: "25P02",
                                    message: "the transaction was aborted by an earlier failed statement and rolled back",
                                    sql: "COMMIT")
            }
            return result
        } catch {
            // A broken connection has no transaction left to end (the server rolls it back).
            if !isBroken { _ = try? execute("ROLLBACK") }
            throw error
        }
    }
}

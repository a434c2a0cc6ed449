import Foundation
import Testing
import TodayStore
import TodayTestSupport

/// How the libpq owner reports a database out of reach, a lock cycle, and never a password.
@Suite struct PostgresFailureTests {
    @Test func aDeadPortIsAConnectionErrorAtOnceWithThePasswordMasked() throws {
        let port = unusedLoopbackPort()
        for uri in ["postgres://todaysim:s3cret-pw@127.0.0.1:\(port)/todaysim",
                    "host=127.0.0.1 port=\(port) user=todaysim password=s3cret-pw dbname=todaysim"] {
            let started = Date()
            // A connection waiting for its connect timeout (600 s) would pass 60 s; a refused
            // one takes milliseconds, so no healthy run comes near the bound.
            let error = #expect(throws: PostgresError.self) { try PostgresConnection(uri: uri, connectTimeout: 600) }
            #expect(Date().timeIntervalSince(started) < 60, "a refused connection fails at once")
            #expect(error?.isConnectionLost == true)
            let text = "\(error.map(String.init(describing:)) ?? "") \(error?.message ?? "")"
            #expect(!text.contains("s3cret-pw"), "\(text)")
            #expect(text.contains("127.0.0.1") && text.contains("***"), "\(text)")
        }
    }

    @Test func aServerStoppedUnderALiveConnectionIsAConnectionLost() async throws {
        let server = try await PostgresServer.started()
        let connection = try PostgresConnection(uri: server.uri)
        #expect(try connection.execute("SELECT 1").int64(0, 0) == 1)
        try await server.stop()
        for _ in 0..<2 {
            let error = #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
            #expect(error?.isConnectionLost == true, "\(error.map(String.init(describing:)) ?? "")")
        }
        #expect(connection.isBroken)
        // Started again, the same URI reaches it (a restart keeps the port).
        try await server.start()
        #expect(try PostgresConnection(uri: server.uri).execute("SELECT 2").int64(0, 0) == 2)
    }

    /// Issue 24, item 3: a statement's deadline is measured on the connection's clock. Against a
    /// frozen PostgreSQL (its processes stopped: the socket open, nothing answering) the
    /// statement ends only when the test's clock passes its deadline, an hour that no real wait
    /// in this test comes near; the connection is then given up as lost.
    @Test func aStatementToAFrozenDatabaseIsGivenUpWhenTheTestsClockPassesItsDeadline() async throws {
        let server = try await PostgresServer.started()
        let time = ManualTime()
        let connection = try PostgresConnection(uri: server.uri, deadline: .seconds(3600), time: time)
        #expect(try connection.execute("SELECT 1").int64(0, 0) == 1, "answered while the clock stands still")
        var frozen = try server.freeze()
        defer { frozen.thaw() }
        let ended = Outcome()
        let onThread = UncheckedSendable(connection)
        Thread {
            ended.set(Result { try onThread.value.execute("SELECT 2") }.map { _ in () })
        }.start()
        // Moved past an hour at each look: whenever the statement began, the next look's move
        // passes its deadline. (A minute a look needed 60 looks, and a test task starved on a
        // loaded machine made fewer than that in `eventually`'s 300 s: a fresh-clone run, the thread
        // sanitizer.)
        #expect(await eventually { time.move(by: 3_600_001); return ended.result != nil }, "the statement never ended")
        guard case let .failure(error as PostgresError)? = ended.result else {
            Issue.record("the statement against a frozen database ended with \(String(describing: ended.result))")
            return
        }
        #expect(error.isConnectionLost, "\(error)")
        #expect(error.message.contains("did not answer within"), "\(error)")
        #expect(connection.isBroken)
        frozen.thaw()
    }

    @Test func aLockCycleIsADeadlockForOneOfTheTwo() throws {
        try TestPostgres.withDatabase { uri in
            let first = try PostgresConnection(uri: uri)
            let second = try PostgresConnection(uri: uri)
            try first.execute("CREATE TABLE t (id bigint PRIMARY KEY); INSERT INTO t VALUES (1), (2)")
            try first.execute("BEGIN; SELECT id FROM t WHERE id = 1 FOR UPDATE")
            try second.execute("BEGIN; SELECT id FROM t WHERE id = 2 FOR UPDATE")
            // The first waits for row 2 on a thread of its own; the second then closes the cycle.
            // Whichever PostgreSQL aborts releases its locks, and the other gets its row.
            let firstOutcome = Outcome()
            let firstOnThread = UncheckedSendable(first)
            Thread {
                let result = Result { try firstOnThread.value.execute("SELECT id FROM t WHERE id = 2 FOR UPDATE") }
                firstOutcome.set(result.map { _ in () })
            }.start()
            let secondOutcome = Result { try second.execute("SELECT id FROM t WHERE id = 1 FOR UPDATE") }.map { _ in () }
            try second.execute("ROLLBACK")
            let outcomes = [firstOutcome.wait(), secondOutcome]
            try first.execute("ROLLBACK")
            let deadlocks = outcomes.filter { if case let .failure(error as PostgresError) = $0 { error.isDeadlock } else { false } }
            #expect(deadlocks.count == 1, "\(outcomes)")
        }
    }
}

/// A connection handed to one other thread, used by one thread at a time.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A result handed from a thread, waited for once.
private final class Outcome: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Result<Void, any Error>?

    func set(_ result: Result<Void, any Error>) {
        condition.lock()
        value = result
        condition.signal()
        condition.unlock()
    }

    /// The result if it was set, without waiting.
    var result: Result<Void, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    func wait() -> Result<Void, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while value == nil { condition.wait() }
        return value!
    }
}

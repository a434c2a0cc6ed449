import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// A PostgreSQL that freezes instead of going away (its processes stopped: sockets open, the
/// kernel acknowledging, nothing answering) must not hold a read, a write or the server's stop
/// for ever: every statement has a deadline (`--statement-timeout-seconds`, here 10 s), past it
/// the connection is given up and the request answered `503 storage_unavailable` as for a lost
/// connection. The server drains for 600 s at SIGTERM, so the write waiting then is answered by
/// its own deadline, not by whichever of two equal windows closed first.
@Suite(.disabled(if: TestServer.onPostgres, "runs a PostgreSQL server of its own: once, not once per store"))
struct PostgresFreezeTests {
    /// How long an answer is waited for: no healthy run comes near it (the deadline is 10 s);
    /// it only tells "answered" from "held for ever".
    static let bound: TimeInterval = 120
    static let input = "{\"advanceMs\":100}"

    /// `request`'s answer and how long it took; `nil` when none came within `bound`.
    static func timed(_ request: () async throws -> RawConnection.Answer?) async rethrows -> (RawConnection.Answer?, TimeInterval) {
        let started = Date()
        let answer = try await request()
        return (answer, Date().timeIntervalSince(started))
    }

    static func expectUnavailable(_ answer: RawConnection.Answer?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer?.status == 503, "\(what): \(answer.map(\.description) ?? "no answer within \(bound) s")", sourceLocation: sourceLocation)
        #expect(answer?.json["code"] == "storage_unavailable", "\(what): \(answer.map(\.description) ?? "-")", sourceLocation: sourceLocation)
    }

    @Test func realTimeAFrozenDatabaseHoldsNoReadNoWriteAndNoStopForEver() async throws {
        let postgres = try await PostgresServer.started()
        // The deadline is generous for the statements that must succeed (a sanitizer build's
        // commit beside a CPU hog); the drain far longer, so the write waiting at SIGTERM is
        // answered by its deadline.
        let server = try await ServedBinary(["--db", postgres.uri, "--statement-timeout-seconds", "10", "--drain-seconds", "600"])
        #expect(try await server.answer("POST", "/v1/sessions", body: "{\"uid\":\"u1\",\"id\":\"s1\"}")?.status == 201)
        #expect(try await server.answer("POST", "/v1/sessions/s1/clock", body: Self.input)?.status == 200)
        let ready = { () async -> Bool in (try? await server.answer("GET", "/readyz"))??.status == 200 }

        // A read: its version check waits on a reader connection.
        var frozen = try postgres.freeze()
        defer { frozen.thaw() }
        let (read, readSeconds) = try await Self.timed { try await server.answer("GET", "/v1/sessions/s1", timeout: Self.bound) }
        Self.expectUnavailable(read, "a read of a frozen database")
        frozen.thaw()
        #expect(await eventually(within: Self.bound) { await ready() }, "readiness did not return after the database thawed")

        // A write: its transaction waits on the write connection. It was not applied.
        frozen = try postgres.freeze()
        let (write, writeSeconds) = try await Self.timed {
            try await server.answer("POST", "/v1/sessions/s1/clock", body: Self.input, headers: ["Idempotency-Key: k1"], timeout: Self.bound)
        }
        Self.expectUnavailable(write, "a write to a frozen database")
        frozen.thaw()
        #expect(await eventually(within: Self.bound) { await ready() }, "readiness did not return after the database thawed")
        #expect(try await server.answer("GET", "/v1/sessions/s1")?.json["version"] == 2, "the refused write was applied")

        // The stop, with a write waiting on the frozen database when SIGTERM comes.
        frozen = try postgres.freeze()
        // In flight before the signal: libmicrohttpd says 100 Continue only once it has handed the
        // headers to the server. (Sent at once, a slow machine could still have the connection
        // in the accept queue at SIGTERM, which the closing listening socket resets.)
        let waiting = try RawConnection(port: server.port)
        waiting.send("POST /v1/sessions/s1/clock HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + "Expect: 100-continue\r\nContent-Length: \(Self.input.utf8.count)\r\n\r\n")
        #expect(await waiting.readAnswer()?.status == 100, "the server did not take the request's headers")
        waiting.send(Self.input)
        server.process.signal(SIGTERM)
        let stopped = Date()
        let status = await server.process.ended(within: Self.bound)
        let stopSeconds = Date().timeIntervalSince(stopped)
        #expect(status == 0, "the server did not stop within \(Self.bound) s of SIGTERM with the database frozen: \(server.errors.all)")
        #expect(await waiting.readAnswer(timeout: Self.bound)?.status == 503, "the write waiting at SIGTERM was not answered 503")
        let said = { (answer: RawConnection.Answer?) in answer.map { "\($0.status)" } ?? "no answer" }
        print("frozen PostgreSQL: read \(said(read)) after \(readSeconds) s, write \(said(write)) after \(writeSeconds) s, "
            + "stop \(status.map { "exit \($0)" } ?? "still running") after \(stopSeconds) s")
    }
}

import CPostgres
import Foundation
import Glibc
import TodayHost

/// Every statement within a deadline (issue 15: a frozen database must not hang a request or
/// the shutdown). A PostgreSQL that stops answering without going away — its processes stopped
/// (`SIGSTOP`), a stalled disk, a hung host whose kernel still answers — leaves libpq's blocking
/// calls (`PQexec`…) waiting forever: libpq has no client-side statement timeout,
/// `statement_timeout` is enforced by the server that is frozen, and TCP's own timeouts
/// (`TCP_USER_TIMEOUT`, keepalives) never fire while the server's kernel still acknowledges
/// (measured: `psql` with `tcp_user_timeout=1000` and keepalives every second, against a
/// stopped PostgreSQL, was still waiting 20 s later). So statements go through libpq's
/// non-blocking API (`PQsend…`, then `PQflush`/`PQconsumeInput`/`PQgetResult`), and every wait
/// is a `poll` on the connection's socket that ends at the deadline. A statement past it is
/// reported as a lost connection (`connectionBroken`): its owner drops the connection, the
/// caller answers `storage_unavailable` (a `COMMIT` past it: outcome unknown), and the
/// background reconnects.
extension PostgresConnection {
    /// Sends a statement with `send` (one of libpq's `PQsend…` calls, `1` on success) and
    /// returns its last result, as `PQexec` would, all within `deadline`.
    @discardableResult
    func exchange(_ sql: String, _ send: () -> Int32) throws(PostgresError) -> PostgresResult {
        guard !abandoned else {
            throw PostgresError(sqlState: nil, message: "the connection was given up: PostgreSQL did not answer in time",
                                sql: sql, connectionBroken: true)
        }
        let end = deadline.map { Self.steadyMs(after: $0, from: time.steadyMs()) }
        guard send() == 1 else { return try checked(nil, sql: sql) }
        var last: OpaquePointer?
        do throws(PostgresError) {
            // Everything sent: in non-blocking mode a statement may still sit in libpq's buffer.
            while case let flushed = PQflush(handle), flushed != 0 {
                guard flushed > 0 else { throw failure(sql) }
                if try wait(for: Int16(POLLIN | POLLOUT), until: end, sql) & Int16(POLLIN) != 0, PQconsumeInput(handle) == 0 {
                    throw failure(sql)
                }
            }
            // Every result read, the last one kept (a string of several statements has one each).
            while true {
                while PQisBusy(handle) == 1 {
                    _ = try wait(for: Int16(POLLIN), until: end, sql)
                    guard PQconsumeInput(handle) == 1 else { throw failure(sql) }
                }
                guard let result = PQgetResult(handle) else { break }
                PQclear(last)
                last = result
                if isBroken { break }
            }
        } catch {
            PQclear(last)
            throw error
        }
        return try checked(last, sql: sql)
    }

    /// Waits until the socket is ready for `events`; returns what it is ready for. At `end` the
    /// connection is given up.
    private func wait(for events: Int16, until end: Millis?, _ sql: String) throws(PostgresError) -> Int16 {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw failure(sql) }
        while true {
            var timeout: Int32 = -1
            if let end {
                timeout = time.pollTimeoutMs(untilSteadyMs: end)
                guard timeout > 0 else {
                    abandoned = true
                    throw PostgresError(sqlState: nil, message: "PostgreSQL did not answer within \(deadline ?? .zero) (the connection is given up)",
                                        sql: sql, connectionBroken: true)
                }
            }
            var watch = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&watch, 1, timeout)
            if ready > 0 { return watch.revents }
            if ready < 0, errno != EINTR {
                throw PostgresError(sqlState: nil, message: "poll: \(String(cString: strerror(errno)))", sql: sql, connectionBroken: true)
            }
        }
    }

    /// The steady reading `duration` after `start`, rounded up to the millisecond; the
    /// furthest reading there is when it would overflow (a deadline of years is no deadline).
    private static func steadyMs(after duration: Duration, from start: Millis) -> Millis {
        let (seconds, attoseconds) = duration.components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let (length, longer) = ms.addingReportingOverflow(fraction)
        let (sum, later) = start.addingReportingOverflow(length)
        return overflow || longer || later ? .max : sum
    }

    /// Reading or writing the socket failed mid-statement: the connection is no longer usable.
    private func failure(_ sql: String) -> PostgresError {
        abandoned = true
        return PostgresError(sqlState: nil, message: Self.lastMessage(handle), sql: sql, connectionBroken: true)
    }
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// `--max-connections` (issue 12, item 11): past libmicrohttpd's own limit a client hangs with
/// nothing said; past the server's (set below it) the client is answered `503` and closed.
@Suite struct ConnectionLimitTests {
    private static let healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test func aConnectionPastTheLimitIsAnswered503AndClosedAndLoggedOnce() async throws {
        let server = try TestServer(maxConnections: 3)
        let port = server.server!.port
        var held: [RawConnection] = []
        for _ in 0..<3 {
            let connection = try RawConnection(port: port)
            connection.send(Self.healthz)
            #expect(await connection.readAnswer()?.status == 200, "a connection within the limit is served")
            held.append(connection)
        }
        for _ in 0..<2 {
            let past = try RawConnection(port: port)
            past.send(Self.healthz)
            let answer = try #require(await past.readAnswer(), "a connection past the limit got no answer")
            #expect(answer.status == 503, "\(answer)")
            #expect(answer.json["code"] == "too_many_connections", "\(answer)")
            #expect(answer.headers["retry-after"] == "1")
            let closed = await past.closedByServer()
            #expect(answer.closes && closed, "the refused connection is closed")
        }
        let notes = server.logLines.all.filter { $0.contains("connection limit 3 reached") }
        #expect(notes.count == 1, "refusals are logged once per interval: \(server.logLines.all)")

        // One held connection closes: a new one is served again (once the server saw the close).
        held.removeFirst()
        let servedAgain = try await eventually {
            let again = try RawConnection(port: port)
            again.send(Self.healthz)
            return await again.readAnswer()?.status == 200
        }
        #expect(servedAgain, "a freed place is served again")
    }
}

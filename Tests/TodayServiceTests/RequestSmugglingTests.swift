import Foundation
import Testing
import TodayHost
@testable import TodayServer

/// Request smuggling (issue 12, item 4; RFC 9112 §6.3): a request whose body's end two hops
/// could read differently is refused and its connection closed, so the rest of its body never
/// runs as a second request. Each hidden request here would create the session `smuggled`:
/// that it does not exist afterwards is the proof nothing ran.
@Suite struct RequestSmugglingTests {
    static let hidden = #"{"uid":"u","id":"smuggled"}"#
    /// A complete request that creates `smuggled`, to hide inside another request's body.
    static let hiddenCreate = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(hidden.utf8.count)\r\n\r\n\(hidden)"
    static let body = #"{"uid":"u","id":"s1"}"#

    /// Sends `request` on a fresh connection; expects `status` with `code`, the connection
    /// closed, and `smuggled` not created.
    private func expectRefused(_ request: String, _ status: Int, _ code: String,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = try TestServer()
        let connection = try RawConnection(port: server.server!.port)
        connection.send(request)
        let answer = await connection.readAnswer()
        #expect(answer?.status == status, "\(answer.map(String.init(describing:)) ?? "no answer")", sourceLocation: sourceLocation)
        #expect(answer?.json["code"] == .string(code), sourceLocation: sourceLocation)
        #expect(answer?.closes == true, "the refusal says Connection: close", sourceLocation: sourceLocation)
        #expect(await connection.closedByServer(), "the connection stays open after the refusal", sourceLocation: sourceLocation)
        let client = Client(server: server)
        #expect(try await client.get("/v1/sessions/smuggled").status == 404, "the hidden request ran", sourceLocation: sourceLocation)
        #expect(try await client.get("/v1/sessions/s1").status == 404, "the refused request was applied", sourceLocation: sourceLocation)
    }

    private func post(_ headers: String, _ body: String) -> String {
        "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\(headers)\r\n\(body)"
    }

    @Test func twoContentLengthsThatDifferAre400AndTheRestOfTheBodyNeverRuns() async throws {
        let long = Self.body.utf8.count + Self.hiddenCreate.utf8.count
        try await expectRefused(post("Content-Length: \(Self.body.utf8.count)\r\nContent-Length: \(long)\r\n",
                                     Self.body + Self.hiddenCreate), 400, "malformed_request")
    }

    /// Decided: the same length repeated frames the body the same way whichever header a hop
    /// takes, so it is read (RFC 9112 §6.3 allows either) and the connection kept.
    @Test func theSameContentLengthTwiceIsTakenAndTheConnectionKept() async throws {
        let server = try TestServer()
        let connection = try RawConnection(port: server.server!.port)
        let length = Self.body.utf8.count
        connection.send(post("Content-Length: \(length)\r\nContent-Length: \(length)\r\n", Self.body))
        let created = try #require(await connection.readAnswer())
        #expect(created.status == 201 && !created.closes, "\(created)")
        connection.send("GET /v1/sessions/s1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await connection.readAnswer()?.status == 200, "the kept connection serves the next request")
    }

    @Test func contentLengthWithChunkedIs400AndTheHiddenRequestNeverRuns() async throws {
        try await expectRefused(post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n" + Self.hiddenCreate),
                                400, "malformed_request")
        try await expectRefused(post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n" + Self.hiddenCreate),
                                400, "malformed_request")
    }

    /// Before: no answer at all (libmicrohttpd reads such a body as one without end).
    @Test(arguments: ["xchunked", "gzip, chunked", "chunked, chunked", "chunked\r\nTransfer-Encoding: chunked", "identity"])
    func anUnknownTransferEncodingIs501AndCloses(_ encoding: String) async throws {
        let chunk = String(Self.body.utf8.count, radix: 16) + "\r\n" + Self.body + "\r\n0\r\n\r\n"
        try await expectRefused(post("Transfer-Encoding: \(encoding)\r\n", chunk + Self.hiddenCreate),
                                501, "unsupported_transfer_encoding")
    }

    @Test func aBareCRInAHeaderIs400() async throws {
        try await expectRefused(post("X-Note: a\rb\r\nContent-Length: \(Self.body.utf8.count)\r\n", Self.body),
                                400, "malformed_request")
        try await expectRefused(post("Content-Length: \(Self.body.utf8.count)\r\nX\rY: z\r\n", Self.body),
                                400, "malformed_request")
    }

    /// libmicrohttpd would store `Content-Length ` (with the space) as another header and read
    /// no body, running the body as the next request.
    @Test func whitespaceBeforeAHeadersColonIs400() async throws {
        try await expectRefused(post("Content-Length : \(Self.hiddenCreate.utf8.count)\r\n", Self.hiddenCreate),
                                400, "malformed_request")
    }

    @Test func aChunkedBodyInAnyCaseIsStillRead() async throws {
        let server = try TestServer()
        let connection = try RawConnection(port: server.server!.port)
        let chunk = String(Self.body.utf8.count, radix: 16) + "\r\n" + Self.body + "\r\n0\r\n\r\n"
        connection.send(post("Transfer-Encoding: Chunked\r\n", chunk))
        #expect(await connection.readAnswer()?.status == 201)
    }

    @Test func theFramingRulesOnHeaderLists() {
        func headers(_ pairs: [(String, String)]) -> [RequestFraming.Header] {
            pairs.map { (Array($0.0.utf8), Array($0.1.utf8)) }
        }
        #expect(RequestFraming.refusal(headers([("Host", "x"), ("Content-Length", "5")])) == nil)
        #expect(RequestFraming.refusal(headers([("content-length", "5"), ("CONTENT-LENGTH", "5")])) == nil)
        #expect(RequestFraming.refusal(headers([("Content-Length", "5"), ("content-length", "6")]))?.code == "malformed_request")
        #expect(RequestFraming.refusal(headers([("Content-Length", "5"), ("content-length", "05")]))?.code == "malformed_request")
        #expect(RequestFraming.refusal(headers([("Transfer-Encoding", "CHUNKED")])) == nil)
        #expect(RequestFraming.refusal(headers([("Transfer-Encoding", "chunked "), ]))?.code == "unsupported_transfer_encoding")
        #expect(RequestFraming.refusal(headers([("transfer-encoding", "chunked"), ("Content-Length", "0")]))?.status == 400)
        #expect(RequestFraming.refusal(headers([("X", "a\rb")]))?.code == "malformed_request")
        #expect(RequestFraming.refusal(headers([("X\tY", "a")]))?.code == "malformed_request")
    }
}

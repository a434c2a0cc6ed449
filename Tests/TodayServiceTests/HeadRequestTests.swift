import Foundation
import Testing
import TodayStore

/// `HEAD` on every `GET` route (issue 13, item 7): health checkers use it. The answer is the
/// GET's status and headers with no body; a stream or a long poll answers its headers at once.
@Suite struct HeadRequestTests {
    /// A path that reaches each GET route of the table with a real session, `s1`.
    static func concretePath(_ template: String) -> String {
        let path = template.replacingOccurrences(of: "{id}", with: "s1")
        return path == "/v1/events" ? path + "?uid=u1" : path
    }

    /// Streams: their GET never ends, so HEAD is compared with what a GET starts with.
    static let streams: Set = ["/v1/sessions/{id}/events", "/v1/events"]

    @Test func everyGetRouteAnswersHeadWithTheGetHeadersAndNoBody() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let templates = server.service!.router.routes.filter { $0.method == "GET" }.map(\.template)
        #expect(templates.contains("/healthz") && templates.contains("/openapi.yaml"))
        for template in templates where !Self.streams.contains(template) {
            let path = Self.concretePath(template)
            // HEAD then GET on one kept-alive connection: had HEAD sent a body, the GET's
            // answer would not parse (or would be the HEAD's body).
            let connection = try RawConnection(port: server.server!.port)
            connection.send("HEAD \(path) HTTP/1.1\r\nHost: t\r\n\r\nGET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
            let head = try #require(await connection.readAnswer(toHead: true), "\(path): no answer to HEAD")
            let get = try #require(await connection.readAnswer(), "\(path): no answer to the GET after HEAD")
            #expect(head.status == get.status && get.status == 200, "\(path): \(head.status) against \(get.status)")
            var headHeaders = head.headers, getHeaders = get.headers
            for varying in ["date", "content-length"] {
                headHeaders[varying] = nil
                getHeaders[varying] = nil
            }
            #expect(headHeaders == getHeaders, "\(path)")
            // /metrics counts the requests themselves: the HEAD adds to the GET's body.
            if template != "/metrics" {
                #expect(head.headers["content-length"] == "\(get.body.count)", "\(path)")
            }
            #expect(!get.body.isEmpty, "\(path)")
        }
    }

    /// A stream under HEAD sends its headers and ends; nothing stays parked for it.
    @Test func streamsAnswerHeadWithHeadersOnlyAndCloseTheConnection() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        for template in Self.streams {
            let connection = try RawConnection(port: server.server!.port)
            connection.send("HEAD \(Self.concretePath(template)) HTTP/1.1\r\nHost: t\r\n\r\n")
            let head = try #require(await connection.readAnswer(toHead: true), "\(template)")
            #expect(head.status == 200)
            #expect(head.headers["content-type"] == "text/event-stream")
            #expect(head.headers["content-length"] == nil, "\(template): a stream's length is not known")
            #expect(await connection.closedByServer(), "\(template): the HEAD answer ends")
        }
        let unknown = try RawConnection(port: server.server!.port)
        unknown.send("HEAD /v1/sessions/nobody/events HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await unknown.readAnswer(toHead: true)?.status == 404, "the same status as GET")
    }

    /// A long poll under HEAD answers the page as it is now instead of waiting up to 30 s. Its
    /// wait runs on a clock the test holds, never moved: a HEAD that waited like the GET would
    /// never be answered, however long a loaded machine takes to answer one that does not.
    @Test func aLongPollUnderHeadAnswersAtOnce() async throws {
        let server = try TestServer(serviceClock: ManualTime())
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let connection = try RawConnection(port: server.server!.port)
        connection.send("HEAD /v1/sessions/s1/timeline?after=99&waitMs=30000 HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try #require(await connection.readAnswer(timeout: 120, toHead: true), "HEAD waited like the GET would")
        #expect(head.status == 200)
        #expect(head.headers["etag"] != nil)
        let badWait = try RawConnection(port: server.server!.port)
        badWait.send("HEAD /v1/sessions/s1/timeline?waitMs=99999 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await badWait.readAnswer(toHead: true)?.status == 400, "a bad waitMs is refused as under GET")
    }

    @Test func aPathWithoutGetRefusesHeadAndGetRoutesListHeadInAllow() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let head = try await client.send("HEAD", "/v1/reset")
        #expect(head.status == 405)
        #expect(head.header("Allow") == "POST")
        let post = try await client.send("POST", "/healthz", body: [])
        #expect(post.header("Allow") == "GET, HEAD")
    }
}

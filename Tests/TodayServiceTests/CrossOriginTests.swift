import Foundation
import Testing
import TodayHost

/// Issue 8: `/bridge.js` and the CORS answers a page on another origin needs (`--allow-origin`).
@Suite struct CrossOriginTests {
    static let page = "http://127.0.0.1:3000"

    @Test func theShimIsServedAsKeptInTheRepository() async throws {
        let server = try TestServer(token: "secret")
        let reply = try await Client(server: server).get("/bridge.js")
        #expect(reply.status == 200, "the shim needs no token: a page loads it before it has one")
        #expect(reply.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(reply.bytes == (try RepositoryFiles.bytes("Web/bridge.js")), "GET /bridge.js is Web/bridge.js byte for byte")
        // Web/bridge.js is made by Scripts/make-bridge: the page's part around the one bridge that
        // installBridge gives any EventTarget, with its `export`s made local functions.
        let core = String(decoding: try RepositoryFiles.bytes("Web/bridge-core.mjs"), as: UTF8.self)
            .replacingOccurrences(of: "\nexport ", with: "\n")
        #expect(String(decoding: reply.bytes, as: UTF8.self).contains(core.trimmingCharacters(in: .newlines)),
                "GET /bridge.js carries Web/bridge-core.mjs whole")
    }

    @Test func noOriginIsAllowedByDefault() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let read = try await client.send("GET", "/healthz", headers: ["Origin": Self.page])
        #expect(read.status == 200)
        #expect(read.header("Access-Control-Allow-Origin") == nil)
        let preflight = try await client.send("OPTIONS", "/v1/sessions", headers: [
            "Origin": Self.page, "Access-Control-Request-Method": "POST",
        ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Allow") == "POST, GET, HEAD, DELETE, OPTIONS")
        #expect(preflight.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func anAllowedOriginGetsCORSOnEveryAnswerAndPreflight() async throws {
        let server = try TestServer(allowedOrigins: [Self.page])
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let preflight = try await client.send("OPTIONS", "/v1/sessions/s1/web-events", headers: [
            "Origin": Self.page, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type",
        ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == Self.page)
        #expect(preflight.header("Access-Control-Allow-Methods") == "POST")
        #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Content-Type") == true)
        expectProblem(try await client.send("OPTIONS", "/v2/nothing", headers: ["Origin": Self.page]), 404, "not_found")

        let posted = try await client.send("POST", "/v1/sessions/s1/web-events", body: Array(#"{"type":"track","event":"x"}"#.utf8),
                                           headers: ["Origin": Self.page])
        #expect(posted.status == 200)
        #expect(posted.header("Access-Control-Allow-Origin") == Self.page)
        #expect(posted.header("Vary") == "Origin")
        let refused = try await client.send("GET", "/v1/sessions/nobody", headers: ["Origin": Self.page])
        #expect(refused.status == 404)
        #expect(refused.header("Access-Control-Allow-Origin") == Self.page, "errors are readable by the page too")
        // A long poll is answered later (parked): it carries the headers as well.
        let polled = try await client.send("GET", "/v1/sessions/s1/timeline?after=999&waitMs=100", headers: ["Origin": Self.page])
        #expect(polled.status == 200)
        #expect(polled.header("Access-Control-Allow-Origin") == Self.page)
        let other = try await client.send("GET", "/v1/sessions/s1", headers: ["Origin": "http://evil.example"])
        #expect(other.status == 200)
        #expect(other.header("Access-Control-Allow-Origin") == nil, "another origin gets nothing")
    }
}

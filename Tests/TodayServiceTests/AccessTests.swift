import Foundation
import Testing
import TodayHost

/// `--token`: nothing but health and preflights without it; the token never reaches the log.
@Suite struct AccessTests {
    @Test func aTokenGuardsEveryEndpointButHealth() async throws {
        let server = try TestServer(token: "s3cret-token")
        let client = Client(server: server)
        #expect(try await client.get("/healthz").status == 200)

        let refused = try await client.post("/v1/sessions", ["uid": "u1", "id": "s1"])
        expectProblem(refused, 401, "unauthorized")
        #expect(refused.header("WWW-Authenticate") == "Bearer realm=\"todaysim\"")
        expectProblem(try await client.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer wrong"]), 401, "unauthorized")
        expectProblem(try await client.send("GET", "/v1/sessions", headers: ["Authorization": "Bearer s3cret-token-and-more"]),
                      401, "unauthorized")
        expectProblem(try await client.get("/metrics"), 401, "unauthorized")
        expectProblem(try await client.get("/"), 401, "unauthorized")
        expectProblem(try await client.get("/no/such/path"), 401, "unauthorized", field: nil)

        let created = try await client.send("POST", "/v1/sessions", body: Array(#"{"uid":"u1","id":"s1"}"#.utf8),
                                            headers: ["Authorization": "Bearer s3cret-token"])
        #expect(created.status == 201)
        // Browsers that cannot set a header (EventSource, a page load) pass it in the query.
        #expect(try await client.get("/v1/sessions/s1?access_token=s3cret-token").status == 200)
        #expect(try await client.get("/?access_token=s3cret-token").status == 200)
        #expect(try await client.send("OPTIONS", "/v1/sessions").status != 401, "CORS preflights need no token")

        for line in server.logLines.all {
            #expect(!line.contains("s3cret"), "\(line)")
        }
    }

    @Test func withoutATokenNothingIsAsked() async throws {
        let server = try TestServer()
        #expect(try await Client(server: server).get("/v1/sessions").status == 200)
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TodayHost
import TodayTestSupport

/// `waitMs`: a timeline request waits for the next entry instead of polling, parked without a
/// thread of its own.
@Suite struct WaitTests {
    /// The waits of the tests whose client acts while a request waits (their servers accept it):
    /// far longer than any starved test task, so none finds its wait run out before it acts.
    static let longWaitMs = 300_000

    /// A client that opens as many connections as the test asks for (URLSession's default is 6
    /// a host), and waits as long as the long waits.
    static let wideSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.timeoutIntervalForRequest = 600
        return URLSession(configuration: configuration)
    }()

    func get(_ server: TestServer, _ path: String) async throws -> (status: Int, json: JSON) {
        let (data, response) = try await Self.wideSession.data(from: URL(string: path, relativeTo: server.base)!)
        return ((response as! HTTPURLResponse).statusCode, (try? JSON.parse(bytes: Array(data))) ?? .null)
    }

    /// Woken by the entry, not by the end of its wait: told by how the server ended the
    /// wait (`waiters.expired`), not by the time it took, which a loaded machine stretches.
    @Test func realTimeAWaitReturnsAsSoonAsAnEntryArrives() async throws {
        let server = try TestServer(longestWaitMs: Self.longWaitMs)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        async let waited = get(server, "/v1/sessions/s1/timeline?after=4&waitMs=\(Self.longWaitMs)")
        #expect(await eventually { server.service!.waiters.count == 1 }, "the request is parked")
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        let (status, page) = try await waited
        #expect(status == 200)
        #expect(page["entries"].map { seqs(in: $0) } == [5, 6, 7, 8])
        #expect(page["next"] == 8)
        #expect(server.service!.waiters.expired == 0, "answered at the end of its wait, not when the entry arrived")
    }

    /// Not before the 300 ms wait ends, and with nothing in it.
    @Test func realTimeAWaitWithNothingNewAnswersAnEmptyPageAtItsEnd() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let started = Date()
        let (status, page) = try await get(server, "/v1/sessions/s1/timeline?after=4&waitMs=300")
        let elapsed = Date().timeIntervalSince(started)
        #expect(status == 200)
        #expect(page == ["entries": [], "next": 4, "more": false])
        // A lower bound only: a loaded machine may take its whole wait to read the page.
        #expect(elapsed >= 0.3)
        // Nothing to wait for when entries already exist: the answer is immediate.
        let (_, existing) = try await get(server, "/v1/sessions/s1/timeline?after=0&waitMs=30000")
        #expect(existing["next"] == 4)
    }

    @Test func badWaitsAreRefused() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        for value in ["-1", "30001", "soon"] {
            expectProblem(try await client.get("/v1/sessions/s1/timeline?waitMs=\(value)"), 400, "invalid_field", field: "waitMs")
        }
    }

    /// Ordinary requests are answered while the waits go on: blocked workers would hold them
    /// until the waits end, and every waiter would then be answered by its deadline.
    @Test func realTimeManyWaitersHoldNoThreadAndOrdinaryRequestsGoOn() async throws {
        let server = try TestServer(longestWaitMs: Self.longWaitMs)  // two HTTP workers
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let waiters = 60
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<waiters {
                group.addTask { try await get(server, "/v1/sessions/s1/timeline?after=4&waitMs=\(Self.longWaitMs)").json["next"]?.int64Value.map(Int.init) ?? -1 }
            }
            // Wait until they are all parked, then use the server as usual.
            #expect(await eventually { server.service!.waiters.count == waiters }, "all \(waiters) parked")
            #expect(try await client.get("/healthz").status == 200)
            #expect(try await client.get("/v1/sessions/s1").status == 200)
            let input = try await client.post("/v1/sessions/s1/gestures", ["type": "pull"])
            #expect(input.status == 200)
            // The pull's entries wake every waiter.
            var answered = 0
            for try await next in group {
                #expect(next == 7)
                answered += 1
            }
            #expect(answered == waiters)
            #expect(server.service!.waiters.expired == 0, "two workers served ordinary requests beside \(waiters) waiters only once the waits ended")
        }
    }

    /// Answered by the stop, not by the end of its 30 s wait.
    @Test func realTimeStoppingTheServerAnswersParkedWaiters() async throws {
        let server = try TestServer(longestWaitMs: Self.longWaitMs)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        async let waited = get(server, "/v1/sessions/s1/timeline?after=4&waitMs=\(Self.longWaitMs)")
        #expect(await eventually { server.service!.waiters.count == 1 }, "the request is parked")
        let waiters = server.service!.waiters
        server.stop()
        let (status, page) = try await waited
        #expect(status == 200)
        #expect(page["entries"] == [])
        #expect(waiters.expired == 0, "the wait ran out before the stop answered it")
    }
}

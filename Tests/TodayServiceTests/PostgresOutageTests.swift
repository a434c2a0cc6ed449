import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Issue 14, item 3: PostgreSQL lost while the server runs. Requests are answered
/// `503 storage_unavailable` at once (none waits for a connection while the database is known
/// down), `/readyz` says so while `/healthz` stays up, readiness returns by itself once the
/// database is back, and nothing refused was applied. Each test runs a PostgreSQL server of its
/// own that it stops and starts on the same port.
@Suite(.disabled(if: TestServer.onPostgres, "runs PostgreSQL servers of its own: once, not once per store"))
struct PostgresOutageTests {
    static let password = "s3cret-pw"
    static let unreachable: JSON = ["status": "degraded", "storage": "unreachable"]
    /// What "at once" means here: a request that waited for a connection attempt would take the
    /// connect timeout, which these tests make 600 s (`connectTimeout`); 120 s is a bound no
    /// healthy run comes near (an answer at once takes milliseconds, a starved test task some
    /// seconds) and still tells the two apart.
    static let quickly: TimeInterval = 120
    /// Appended to the database URI: each connection attempt to a host that never answers
    /// lasts this long.
    static let connectTimeout = "?connect_timeout=600"

    /// One keyed input: the virtual clock moves by 100 ms.
    static func advance(_ client: Client, key: String) async throws -> Client.Reply {
        try await client.send("POST", "/v1/sessions/s1/clock", body: Array(#"{"advanceMs":100}"#.utf8),
                              headers: ["Idempotency-Key": key])
    }

    /// `send`'s answer, which must come within `quickly`.
    static func quick(_ what: String, _ send: () async throws -> Client.Reply,
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> Client.Reply {
        let started = Date()
        let reply = try await send()
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < quickly, "\(what) took \(seconds) s", sourceLocation: sourceLocation)
        return reply
    }

    @Test func realTimeAStoppedDatabaseIsAnsweredAtOnceAndReadinessReturnsByItself() async throws {
        let postgres = try await PostgresServer.started()
        // The server trusts loopback and ignores the password: what matters is that it is never shown.
        let uri = postgres.uri.replacingOccurrences(of: "//postgres@", with: "//postgres:\(Self.password)@")
        #expect(uri.contains(Self.password))
        let server = try TestServer(database: uri)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        #expect(try await Self.advance(client, key: "k0").status == 200)

        try await postgres.stop()
        // No request comes: readiness finds out by itself.
        #expect(try await eventually(within: 60) { try await client.get("/readyz").json == Self.unreachable })
        let ready = try await client.get("/readyz")
        #expect(ready.status == 503 && ready.header("Retry-After") != nil)
        #expect(try await client.get("/healthz").status == 200, "liveness stays: restarting the server brings no database back")
        var refused: [Client.Reply] = []
        for index in 1...5 {
            refused.append(try await Self.quick("input \(index)") { try await Self.advance(client, key: "k\(index)") })
        }
        refused.append(try await Self.quick("a create") { try await client.post("/v1/sessions", ["uid": "u1", "id": "s2"]) })
        for path in ["/v1/sessions/s1", "/v1/sessions/s1/timeline", "/v1/sessions", "/v1/violations"] {
            refused.append(try await Self.quick(path) { try await client.get(path) })
        }
        for reply in refused {
            expectProblem(reply, 503, "storage_unavailable")
            #expect(reply.header("Retry-After") != nil)
        }

        try await postgres.start()
        // Only readiness is asked: it comes back without a write to carry it.
        #expect(try await eventually(within: 120) { try await client.get("/readyz").status == 200 })
        #expect(try await client.get("/readyz").json == ["status": "ok", "storage": "ok"])
        // Nothing refused was applied: each keyed input sent again is applied now, once.
        for index in 1...5 { #expect(try await Self.advance(client, key: "k\(index)").status == 200) }
        #expect(try await Self.advance(client, key: "k3").header("Idempotent-Replayed") == "true", "a repeat replays")
        #expect(try await client.get("/v1/sessions/s1")["version"] == 7)
        let entries = try await client.timeline("s1")
        #expect(entries.map { $0["seq"]?.int64Value ?? 0 } == Array(1...Int64(entries.count)))
        #expect(entries.filter { $0["kind"] == "input" && $0["type"] != "create" }.count == 6)
        #expect((try await client.post("/v1/sessions", ["uid": "u1", "id": "s2"])).status == 201)

        let metrics = try await client.get("/metrics")
        #expect(metrics.status == 200)
        let log = server.logLines.all
        #expect(log.contains { $0.hasPrefix("storage unreachable:") }, "\(log)")
        let shown = log + refused.map(\.text) + [metrics.text, ready.text]
        #expect(!shown.contains { $0.contains(Self.password) }, "\(shown.filter { $0.contains(Self.password) })")
        server.stop()
    }

    /// A database host that takes connections and never answers them (a hung server, a proxy in
    /// front of a dead one): a connection attempt lasts libpq's connect timeout, and no request
    /// may spend it.
    @Test func realTimeADatabaseThatNeverAnswersHoldsNoRequest() async throws {
        let postgres = try await PostgresServer.started()
        let server = try TestServer(database: postgres.uri + Self.connectTimeout)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        try await postgres.stop()
        let silent = try SilentListener(port: try #require(URLComponents(string: postgres.uri)?.port))
        for index in 1...4 {
            let reply = try await Self.quick("input \(index)") { try await Self.advance(client, key: "k\(index)") }
            expectProblem(reply, 503, "storage_unavailable")
            let read = try await Self.quick("read \(index)") { try await client.get("/v1/sessions/s1") }
            expectProblem(read, 503, "storage_unavailable")
            _ = try await Self.quick("readiness \(index)") { try await client.get("/readyz") }
        }
        #expect(try await client.get("/readyz").json == Self.unreachable)
        silent.close()
        try await postgres.start()
        #expect(try await eventually(within: 120) { try await client.get("/readyz").status == 200 })
        #expect(try await Self.advance(client, key: "k1").status == 200)
        #expect(try await client.get("/v1/sessions/s1")["version"] == 2, "the refused inputs were not applied")
        let stopping = Date()
        server.stop()
        #expect(Date().timeIntervalSince(stopping) < Self.quickly, "the stop waited for a connection attempt")
    }
}

/// A loopback port that accepts TCP connections and never says a word (the kernel completes
/// them into the listen queue): a PostgreSQL client waits there for its connect timeout.
final class SilentListener: @unchecked Sendable {
    private let socket: Int32

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 128) == 0 else {
            let failure = errno
            Glibc.close(socket)
            throw ClientError.unexpected(0, "cannot listen on 127.0.0.1:\(port): errno \(failure)")
        }
    }

    func close() {
        Glibc.close(socket)
    }
}

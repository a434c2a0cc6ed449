import Foundation
import Testing
import TodayHost
@testable import TodayStore

/// Issue 12, items 5 and 6: storage that fails under a running server is reported on
/// `/readyz` and never acknowledged as written.
@Suite(.sqliteOnly) struct StorageFailureTests {
    @Test func aDatabaseDeletedUnderTheServerRefusesWritesAndSaysSo() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "before"])
        #expect((try await client.get("/readyz")).json == ["status": "ok", "storage": "ok"])
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: server.databasePath + suffix) }

        // Once answered 201 and lost at the next restart.
        let lost = try await client.post("/v1/sessions", ["uid": "u1", "id": "after"])
        expectProblem(lost, 503, "storage_unavailable")
        #expect(lost.header("Retry-After") == "5")
        expectProblem(try await client.post("/v1/sessions/before/gestures", ["type": "pull", "requestId": "p1"]),
                      503, "storage_unavailable")
        let ready = try await client.get("/readyz")
        #expect(ready.status == 503)
        #expect(ready.json == ["status": "degraded", "storage": "moved"])
        #expect((try await client.get("/healthz")).status == 200, "liveness stays: the process serves")
        let said = server.logLines.all.filter { $0.hasPrefix("storage moved:") }
        #expect(said.count == 1, "said once in the log: \(said)")
        #expect(said.first?.contains(server.databasePath) == true)

        // A restart opens the file at the path (a new one): nothing it acknowledged is missing.
        try server.restart()
        let restarted = Client(server: server)
        #expect((try await restarted.get("/readyz")).status == 200)
        #expect((try await restarted.get("/v1/sessions/after")).status == 404)
    }

    @Test func aFullDiskIs507WithRetryAfterAndReadinessRecovers() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let before = try await client.get("/v1/sessions/s1")
        // Full until cleared, probes included (a probe may run once a second has passed).
        server.store?.failNextCommit(count: .max)
        let full = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        expectProblem(full, 507, "insufficient_storage")
        #expect(full.header("Retry-After") == "10")
        #expect((try await client.get("/v1/sessions/s1")).json == before.json, "nothing written")
        #expect((try await client.get("/readyz")).json == ["status": "degraded", "storage": "full"])
        // Room again: the next write succeeds on its own and readiness follows it.
        server.store?.failNextCommit(count: 0)
        #expect((try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])).status == 200)
        #expect((try await client.get("/readyz")).json == ["status": "ok", "storage": "ok"])
        #expect(server.logLines.all.filter { $0.hasPrefix("storage ") }.count == 2, "one line when full, one when back")
    }
}

import Foundation
import Testing
import TodayHost
@testable import TodayStore

/// A session is its row (`ord`): streams, long polls and the cache tell an id purged and
/// created again from the session they followed by it, so an `ord` is never used twice.
@Suite struct SessionIdentityTests {
    /// SQLite gave a new row the largest ord + 1: once a purged session's row was reclaimed,
    /// the next session got its ord back.
    @Test func aReclaimedSessionsOrdIsNeverUsedAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-ord-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SessionStore(path: directory.appendingPathComponent("s.sqlite").path)
        let first = try store.create(id: "s1", config: SessionConfig(uid: "u1")).stored.ord
        #expect(try store.purge(id: "s1"))
        try store.reclaimRemovedSessions()
        #expect(try store.storage.nextRemoving() == nil, "the purged row is gone")
        let again = try store.create(id: "s1", config: SessionConfig(uid: "u1")).stored.ord
        #expect(again != first, "s1 created again took the purged session's ord \(first)")
        let other = try store.create(id: "s2", config: SessionConfig(uid: "u1")).stored.ord
        #expect(other > again)
    }
}

import Foundation
import Testing
import TodayHost
@testable import TodayStore

/// Concurrent inputs share transactions; a refused one changes nothing while the rest stand.
@Suite struct GroupCommitTests {
    @Test func refusedInputsInASharedTransactionChangeNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SessionStore(path: directory.appendingPathComponent("s.sqlite").path)
        for index in 0..<4 { _ = try store.create(id: "s\(index)", config: SessionConfig(uid: "u")) }

        // Every worker reuses its first id once (refused, H4) between accepted inputs.
        let outcomes = await withTaskGroup(of: (accepted: Int, refused: Int).self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var accepted = 0
                    var refused = 0
                    for step in 0..<30 {
                        let id = step == 5 ? "w\(worker)-0" : "w\(worker)-\(step)"
                        do {
                            _ = try store.apply(.lifecycle(.tabActivated(requestId: id)), to: "s\(worker % 4)")
                            accepted += 1
                        } catch {
                            refused += 1
                        }
                    }
                    return (accepted, refused)
                }
            }
            var total = (accepted: 0, refused: 0)
            for await outcome in group {
                total.accepted += outcome.accepted
                total.refused += outcome.refused
            }
            return total
        }
        #expect(outcomes.refused == 8)
        #expect(outcomes.accepted == 8 * 29)
        var versions = 0
        for index in 0..<4 {
            let stored = try store.reloadFromDisk("s\(index)")
            #expect(stored.session == (try store.session("s\(index)")).session)
            versions += stored.session.version - 1
            let timeline = try store.timeline("s\(index)", after: 0, limit: 1000, kind: nil).entries.count
            #expect(timeline == stored.session.lastSeq, "seq gapless, nothing half-applied")
        }
        #expect(versions == outcomes.accepted)
    }
}

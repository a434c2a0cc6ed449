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

    /// Issue 46, item 2: the writer thread runs no caller's code after a commit. Each answer and
    /// each change notice is handed to the delivery queue (never run on `todaysim-writer`), the
    /// notice before the answer of the same commit; and the view the store caches is the
    /// committed write's (a read after the answer encoded it gets those very bytes).
    @Test func answersAndNoticesReachCallersOffTheWriterThreadInCommitOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-delivery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SessionStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try store.create(id: "s1", config: SessionConfig(uid: "u"))
        let seen = DeliveredLog()
        store.observeChanges { ids in seen.note("notice \(ids.joined()) on \(DeliveredLog.where(store))") }
        let done = DispatchSemaphore(value: 0)
        store.apply(steps: [.input(.gesture(.pull(requestId: "p1")))], to: "s1") { result in
            if case let .success(.applied(writes, nil)) = result {
                seen.note("answer \(writes[0].stored.session.version) on \(DeliveredLog.where(store))")
                seen.view = writes[0].viewBytes
            }
            done.signal()
        }
        done.wait()
        #expect(seen.lines == ["notice s1 on todaysim-delivery", "answer 2 on todaysim-delivery"])
        #expect(try store.viewBytes("s1") == seen.view)
        #expect(try store.viewBytes("s1") == (try store.reloadFromDisk("s1")).viewBytes)
    }
}

/// What reached a caller, and where: the store's delivery queue, or the thread's name.
private final class DeliveredLog: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var lines: [String] = []
    var view: [UInt8] = []

    func note(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    static func `where`(_ store: SessionStore) -> String {
        if Thread.current.name == "todaysim-writer" { return "todaysim-writer" }
        return store.delivery.isCurrent ? "todaysim-delivery" : Thread.current.name ?? "an unnamed thread"
    }
}

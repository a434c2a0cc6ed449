import Foundation
import Testing
import TodayTestSupport
@testable import TodayStore

/// Issue 14, item 4: concurrent reads on shared storage confirm their cached sessions in one
/// query, and each gets its own session's answer.
@Suite struct VersionChecksTests {
    final class Lookups: @unchecked Sendable {
        let lock = NSLock()
        var batches: [[String]] = []
        let firstMayFinish = DispatchSemaphore(value: 0)
        var first = true
    }

    @Test func readersArrivingDuringACheckShareTheNextOne() async throws {
        let lookups = Lookups()
        let checks = VersionChecks { ids throws(StoreError) in
            lookups.lock.lock()
            lookups.batches.append(ids.sorted())
            let isFirst = lookups.first
            lookups.first = false
            lookups.lock.unlock()
            if isFirst { lookups.firstMayFinish.wait() }
            var found: [String: StoredVersion] = [:]
            for id in ids where id != "gone" { found[id] = StoredVersion(ord: Int64(id.dropFirst()) ?? 0, version: 7) }
            return found
        }
        let first = Task.detached { try checks.version(of: "s1") }
        #expect(await eventually { lookups.lock.withLock { lookups.batches.count } == 1 }, "the first check runs")
        let ids = (2...9).map { "s\($0)" } + ["gone"]
        let others = ids.map { id in Task.detached { (id, try checks.version(of: id)) } }
        #expect(await eventually { checks.waitingCount == ids.count }, "the others wait for the next check")
        lookups.firstMayFinish.signal()
        #expect(try await first.value == StoredVersion(ord: 1, version: 7))
        for task in others {
            let (id, version) = try await task.value
            #expect(version == (id == "gone" ? nil : StoredVersion(ord: Int64(id.dropFirst())!, version: 7)), "\(id)")
        }
        #expect(lookups.batches == [["s1"], ids.sorted()], "two queries for ten readers")
    }

    @Test func aFailedCheckFailsEveryReaderOfIt() throws {
        let checks = VersionChecks { _ throws(StoreError) in throw .storageUnavailable("down") }
        #expect(throws: StoreError.storageUnavailable("down")) { try checks.version(of: "s1") }
    }
}

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
        var timedOut = false

        /// Notes the batch; the first one waits for `firstMayFinish`.
        func record(_ ids: [String]) {
            lock.lock()
            batches.append(ids.sorted())
            let isFirst = first
            first = false
            lock.unlock()
            if isFirst { firstMayFinish.wait() }
        }
    }

    /// Readers block in `version(of:)` as request threads do: each runs on a thread of its own
    /// (not a task, which would hold one of the few cooperative threads while it waits).
    final class Reader: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var result: Result<StoredVersion?, StoreError>?

        init(_ checks: VersionChecks, _ id: String) {
            Thread { [self] in
                do throws(StoreError) { result = .success(try checks.version(of: id)) } catch { result = .failure(error) }
                done.signal()
            }.start()
        }

        /// Waits for the answer on a thread of its own: blocking the test's task would hold one
        /// of the few cooperative threads, which every other test's `eventually` needs (under the
        /// thread sanitizer on two cores, two such waits once stalled the whole suite).
        func value() async throws -> StoredVersion? {
            try await offThePool { [self] in
                done.wait()
                return try result!.get()
            }
        }
    }

    @Test func readersArrivingDuringACheckShareTheNextOne() async throws {
        let lookups = Lookups()
        let checks = VersionChecks { ids throws(StoreError) in
            lookups.record(ids)
            var found: [String: StoredVersion] = [:]
            for id in ids where id != "gone" { found[id] = StoredVersion(ord: Int64(id.dropFirst()) ?? 0, revision: 7) }
            return found
        }
        let first = Reader(checks, "s1")
        #expect(await eventually { lookups.lock.withLock { lookups.batches.count } == 1 }, "the first check runs")
        let ids = (2...9).map { "s\($0)" } + ["gone"]
        let others = ids.map { Reader(checks, $0) }
        #expect(await eventually { checks.waitingCount == ids.count }, "the others wait for the next check")
        lookups.firstMayFinish.signal()
        #expect(try await first.value() == StoredVersion(ord: 1, revision: 7))
        for (id, reader) in zip(ids, others) {
            #expect(try await reader.value() == (id == "gone" ? nil : StoredVersion(ord: Int64(id.dropFirst())!, revision: 7)), "\(id)")
        }
        #expect(lookups.batches == [["s1"], ids.sorted()], "two queries for ten readers")
    }

    @Test func aFailedCheckFailsEveryReaderOfIt() throws {
        let checks = VersionChecks { _ throws(StoreError) in throw .storageUnavailable("down") }
        #expect(throws: StoreError.storageUnavailable("down")) { try checks.version(of: "s1") }
    }

    /// With room for two checks at once, two readers do not wait for each other.
    @Test func checksRunSideBySideUpToTheirConnections() async throws {
        let lookups = Lookups()
        let bothRunning = DispatchSemaphore(value: 0)
        let secondAsked = DispatchSemaphore(value: 0)
        let checks = VersionChecks(parallel: 2) { ids throws(StoreError) in
            lookups.lock.lock()
            lookups.batches.append(ids)
            let running = lookups.batches.count
            lookups.lock.unlock()
            // The first check returns only once the second has started beside it (or, were the
            // checks one after the other, after a deadline that fails the test). The deadline
            // runs from when the second reader asked: the test's own task may resume late on a
            // loaded machine (a sanitizer run once took more than 20 s to get there, two
            // fresh-clone runs more than 120 s), so that wait is the suite's own limit, not 120 s.
            if running == 1 {
                _ = secondAsked.wait(timeout: .now() + 1200)
                if bothRunning.wait(timeout: .now() + 120) == .timedOut { lookups.lock.withLock { lookups.timedOut = true } }
            } else {
                bothRunning.signal()
            }
            return [ids[0]: StoredVersion(ord: 1, revision: 1)]
        }
        let first = Reader(checks, "a")
        #expect(await eventually { lookups.lock.withLock { lookups.batches.count } == 1 })
        let second = Reader(checks, "b")
        secondAsked.signal()
        #expect(try await second.value() == StoredVersion(ord: 1, revision: 1))
        #expect(try await first.value() == StoredVersion(ord: 1, revision: 1))
        #expect(lookups.batches.map(\.count) == [1, 1], "each ran its own check")
        #expect(!lookups.lock.withLock { lookups.timedOut }, "side by side, not one after the other")
    }

    /// A read that asks with a callback does not wait: the caller (an HTTP worker) returns at
    /// once while the check is under way, and every read asked meanwhile shares the next one.
    @Test func aReadWithACallbackHoldsNoThread() async throws {
        let lookups = Lookups()
        let checks = VersionChecks { ids throws(StoreError) in
            lookups.record(ids)
            return Dictionary(uniqueKeysWithValues: ids.map { ($0, StoredVersion(ord: 1, revision: 3)) })
        }
        defer { checks.stop() }
        let answers = LockedAnswers()
        // All on this one thread: were `version(of:then:)` to wait for its check, the first call
        // would never return (its check waits for `firstMayFinish`, signalled below).
        let ask = { (id: String) in checks.version(of: id) { result in answers.add(id, try? result.get()) } }
        ask("a")
        #expect(await eventually { lookups.lock.withLock { lookups.batches.count } == 1 }, "the first check runs")
        for id in ["b", "c", "d"] { ask(id) }
        #expect(answers.count == 0, "nothing answered while the first check is held")
        #expect(await eventually { checks.waitingCount == 3 }, "the later three wait for the next check")
        lookups.firstMayFinish.signal()
        #expect(await eventually { answers.count == 4 })
        #expect(answers.all == ["a": StoredVersion(ord: 1, revision: 3), "b": StoredVersion(ord: 1, revision: 3),
                                "c": StoredVersion(ord: 1, revision: 3), "d": StoredVersion(ord: 1, revision: 3)])
        #expect(lookups.lock.withLock { lookups.batches } == [["a"], ["b", "c", "d"]], "two queries for four reads")
    }

    final class LockedAnswers: @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [String: StoredVersion?] = [:]
        func add(_ id: String, _ version: StoredVersion??) { lock.withLock { answers[id] = version ?? nil } }
        var count: Int { lock.withLock { answers.count } }
        var all: [String: StoredVersion?] { lock.withLock { answers } }
    }
}

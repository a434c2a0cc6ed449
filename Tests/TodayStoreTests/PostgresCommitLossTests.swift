import Foundation
import Testing
import TodayHost
import TodayTestSupport
@testable import TodayStore

/// Issue 14, item 3: a COMMIT whose answer is lost (the connection broke while PostgreSQL
/// committed) is never acknowledged, and nothing of it stays in this server's cache: what the
/// database holds is read back, and a keyed retry replays the stored answer instead of
/// applying the input twice.
@Suite struct PostgresCommitLossTests {
    /// One keyed input, waited for.
    static func keyed(_ store: SessionStore, _ key: String) -> Result<SessionStore.Submitted, StoreError> {
        let done = DispatchSemaphore(value: 0)
        let box = KeyedBox()
        let idempotency = SessionStore.Idempotency(key: key, fingerprint: Array(key.utf8), answer: .input, warnings: [])
        store.apply(steps: [.input(.clock(.advanceBy(100)))], to: "s1", ifVersion: nil, idempotency: idempotency) {
            box.result = $0
            done.signal()
        }
        done.wait()
        return box.result!
    }

    @Test func aCommitWhoseAnswerIsLostIsNotAcknowledgedAndReadBackAsStored() async throws {
        try await TestPostgres.withDatabase { uri in
            let store = try SessionStore.open(uri)
            defer { store.close() }
            _ = try store.create(id: "s1", config: SessionConfig(uid: "u1"))
            guard case .applied = try Self.keyed(store, "k1").get() else { Issue.record("k1 is applied"); return }
            #expect(try store.session("s1").session.version == 2, "cached at version 2")

            let told = ToldIds()
            store.observeChanges { ids in told.add(ids) }
            try #require(store.storage as? PostgresStorage).loseCommitAnswers(1)
            let lost = Self.keyed(store, "k2")
            // It may have committed, and this server skips its own notification: whoever waits
            // here on the session (a long poll, a stream) is told to look again.
            #expect(told.all == ["s1"])
            guard case .failure(.outcomeUnknown) = lost else {
                Issue.record("a commit without an answer must not be acknowledged: \(lost)")
                return
            }
            #expect(store.health.snapshot.state == .unreachable)
            #expect(await eventually { store.health.snapshot.state == .ok }, "the background connects again")

            // PostgreSQL did commit it: read back from the database, not from the cache (which
            // still holds version 2).
            let session = try store.session("s1").session
            #expect(session.version == 3 && session.nowMs == 200)
            guard case let .replayed(answer) = try Self.keyed(store, "k2").get() else {
                Issue.record("the keyed retry replays what was committed")
                return
            }
            #expect(try JSON.parse(bytes: answer)["session"]?["version"] == 3, "the stored answer is the keyed write's")
            // The next input builds on the stored version.
            guard case .applied = try Self.keyed(store, "k3").get() else { Issue.record("k3 is applied"); return }
            #expect(try store.session("s1").session.version == 4)
            let inputs = try store.timeline("s1", after: 0, limit: 100, kind: "input").entries.count
            #expect(inputs == 4, "the creation and three inputs, each once")
        }
    }
}

private final class KeyedBox: @unchecked Sendable {
    var result: Result<SessionStore.Submitted, StoreError>?
}

private final class ToldIds: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []
    func add(_ more: [String]) { lock.withLock { ids += more } }
    var all: [String] { lock.withLock { ids } }
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport
@testable import TodayStore

/// The PostgreSQL store keeps the store's contract: the same inputs give the same views,
/// timelines, reports, violations and answers as on SQLite (issue 14, item 5), and two stores
/// on one database (two servers) never both apply an input at one version (item 4).
@Suite struct PostgresStoreTests {
    static let script: [Input] = [
        .gesture(.pull(requestId: "p1")),
        .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w1", "presentation": "header"]),
        .lifecycle(.tabActivated(requestId: "t1")),
        .webEvent(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": "p1", "mode": "soft", "status": "failed"]),
        .clock(.advanceBy(7000)),
        .webEvent(["type": "webView.navigationAction", "url": "today://chat/send?text=hi&msg_trigger_ele_id=wgt_1"]),
        .lifecycle(.background),
        .lifecycle(.accountSwitch(uid: "u2")),
        .teardown,
    ]

    /// Everything a client reads of session `id`.
    static func readBack(_ store: SessionStore, _ id: String) throws -> [String] {
        let timeline = try store.timeline(id, after: 0, limit: 1000, kind: nil).entries.map { String(decoding: $0, as: UTF8.self) }
        let report = try store.report(id)
        let violations = try store.violations(uid: nil, code: nil, limit: 100, after: nil).violations
            .map { "\($0.sessionId) \(String(decoding: $0.entry, as: UTF8.self))" }
        return [String(decoding: try store.viewBytes(id), as: UTF8.self)] + timeline
            + ["\(report.violations.count) violations, \(report.requests.count) records"] + violations
    }

    static func play(_ store: SessionStore) throws -> [String] {
        _ = try store.create(id: "s1", config: SessionConfig(uid: "u1"))
        for input in script { _ = try store.apply(input, to: "s1") }
        _ = try store.fork("s1", as: "copy")
        return try readBack(store, "s1") + readBack(store, "copy")
            + [String(describing: try store.list(uid: nil, label: nil, closed: nil, limit: 10, after: nil).sessions.map(\.id))]
    }

    @Test func theSameInputsReadBackTheSameOnBothStores() throws {
        let sqlite = try SessionStore(path: ":memory:", unixNow: { 1_000 })
        let expected = try Self.play(sqlite)
        try TestPostgres.withDatabase { uri in
            let postgres = try SessionStore.open(uri, unixNow: { 1_000 })
            defer { postgres.close() }
            let got = try Self.play(postgres)
            #expect(got == expected)
            #expect(try postgres.purge(id: "copy"))
            #expect(throws: StoreError.sessionNotFound("copy")) { try postgres.session("copy") }
            let counts = try postgres.sessionCounts()
            #expect(counts.active == 0 && counts.closed == 1)
        }
    }

    /// Two stores on one database: 2 × 50 inputs to one session from both at once are each
    /// applied exactly once, at consecutive versions and gapless `seq`s.
    @Test func twoServersOnOneDatabaseApplyEveryInputOnce() async throws {
        try await withDatabaseAsync { uri in
            let first = try SessionStore.open(uri)
            let second = try SessionStore.open(uri)
            defer { first.close(); second.close() }
            _ = try first.create(id: "shared", config: SessionConfig(uid: "u1"))
            let perStore = 50
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in [first, second] {
                    group.addTask {
                        for _ in 0..<perStore { _ = try store.apply(.clock(.advanceBy(1)), to: "shared") }
                    }
                }
                try await group.waitForAll()
            }
            let session = try first.session("shared").session
            #expect(session.version == 1 + 2 * perStore)
            #expect(session.nowMs == Millis(2 * perStore))
            #expect(try second.session("shared").session.version == session.version, "the other server reads it too")
            let seqs = try first.timeline("shared", after: 0, limit: 1000, kind: nil).entries
                .compactMap { try? JSON.parse(bytes: $0)["seq"]?.int64Value }
            #expect(seqs == Array(1...Int64(seqs.count)), "gapless")
            let inputs = try first.timeline("shared", after: 0, limit: 1000, kind: "input").entries.count
            #expect(inputs == 1 + 2 * perStore, "every input once, plus the creation")
        }
    }

    /// An `Idempotency-Key` retried on the other server replays the first answer.
    @Test func aKeyedRetryOnTheOtherServerReplays() throws {
        try TestPostgres.withDatabase { uri in
            let first = try SessionStore.open(uri)
            let second = try SessionStore.open(uri)
            defer { first.close(); second.close() }
            _ = try first.create(id: "s1", config: SessionConfig(uid: "u1"))
            let keyed = { (store: SessionStore) throws -> SessionStore.Submitted in
                let done = DispatchSemaphore(value: 0)
                let box = AnswerBox()
                store.apply(steps: [.input(.gesture(.pull(requestId: nil)))], to: "s1", ifVersion: nil,
                            idempotency: .init(key: "k1", fingerprint: [1, 2, 3], answer: .input, warnings: [])) {
                    box.result = $0
                    done.signal()
                }
                done.wait()
                return try box.result!.get()
            }
            guard case let .applied(_, stored?) = try keyed(first) else { Issue.record("the first is applied"); return }
            guard case let .replayed(answer) = try keyed(second) else { Issue.record("the retry replays"); return }
            #expect(answer == stored, "the first answer, as stored")
            #expect(try second.session("s1").session.version == 2, "applied once")
        }
    }
}

private final class AnswerBox: @unchecked Sendable {
    var result: Result<SessionStore.Submitted, StoreError>?
}

/// `TestPostgres.withDatabase` for an async body.
func withDatabaseAsync(_ body: (String) async throws -> Void) async throws {
    let database = try TestPostgres.database()
    try await body(database.uri)
    withExtendedLifetime(database) {}
}

import Foundation
import Testing
import TodayHost
import TodayTestSupport
@testable import TodayStore

/// Issue 15, item 4: two stores on one database are two servers; each hears of what the other
/// commits (`LISTEN/NOTIFY`), never of its own commits twice, never of a rollback, and after
/// its listening connection was lost it says that anything may have changed.
@Suite struct PostgresListenerTests {
    /// What a store's observers were told, in order.
    final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [String] = []
        private var wallTimers = 0
        private var unknown = 0

        init(_ store: SessionStore) {
            store.observeChanges { [self] changed in locked { ids += changed } }
            store.observeWallTimerChanges { [self] in locked { wallTimers += 1 } }
            store.observeUnknownChanges { [self] in locked { unknown += 1 } }
        }

        private func locked<T>(_ body: () -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body()
        }

        func count(_ id: String) -> Int { locked { ids.filter { $0 == id }.count } }
        var wallTimerPokes: Int { locked { wallTimers } }
        var unknownChanges: Int { locked { unknown } }
    }

    /// Two stores on a new database, and what the first one's observers are told.
    func withTwoStores(_ body: (SessionStore, SessionStore, Heard) async throws -> Void) async throws {
        try await withDatabaseAsync { uri in
            let first = try SessionStore.open(uri)
            let second = try SessionStore.open(uri)
            defer { first.close(); second.close() }
            try await body(first, second, Heard(first))
        }
    }

    /// Issue 24, item 3: with no listening connection, the next try waits out its backoff on
    /// the listener's clock (100 ms, then doubling), which only the test moves: a millisecond
    /// short of it, the listener looks and waits again; at it, it tries.
    @Test func aListenerWithNoConnectionTriesAgainWhenTheTestsClockReachesItsBackoff() async throws {
        let time = ManualTime()
        let refusing = try #require(RefusingLoopbackPort())
        let listener = PostgresListener(uri: "postgres://postgres@127.0.0.1:\(refusing.port)/todaysim", sender: "test",
                                        time: time)
        listener.start { _ in }
        defer { listener.stop() }
        #expect(listener.connectionTries == 1, "the first try, refused")
        #expect(await eventually { time.waits == 1 }, "waiting out the first backoff")
        for (tries, backoffMs) in [(1, 100), (2, 200), (3, 400), (4, 800)] as [(Int, Millis)] {
            let begun = time.waitsBegun
            time.move(by: backoffMs - 1)
            #expect(await eventually { time.waitsBegun > begun }, "looked at the clock \(backoffMs - 1) ms on")
            #expect(listener.connectionTries == tries, "tried before its \(backoffMs) ms backoff passed")
            time.move(by: 1)
            #expect(await eventually { listener.connectionTries == tries + 1 && time.waits == 1 },
                    "no new try, refused, once \(backoffMs) ms passed")
        }
    }

    @Test func payloadsStayUnderPostgresLimitAndKeepEveryId() {
        let ids = (0..<600).map { "session-\($0)-" + String(repeating: "x", count: $0 % 40) }
        let sender = UUID().uuidString.lowercased()
        let payloads = PostgresChannels.payloads(ids, from: sender)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= PostgresChannels.payloadLimit })
        #expect(payloads.allSatisfy { PostgresChannels.parse($0).sender == sender })
        #expect(payloads.flatMap { PostgresChannels.parse($0).ids } == ids)
        #expect(PostgresChannels.payloads([], from: sender) == [])
    }

    @Test func eachStoreHearsTheOthersCommitsOnceAndNotItsOwnTwice() async throws {
        try await withTwoStores { first, second, heard in
            _ = try first.create(id: "own", config: SessionConfig(uid: "u1"))
            _ = try second.create(id: "other", config: SessionConfig(uid: "u1"))
            #expect(await eventually { heard.count("other") == 1 }, "the create on the other server")
            _ = try second.apply(.lifecycle(.background), to: "other")
            #expect(await eventually { heard.count("other") == 2 }, "an input on the other server")
            // One listening connection delivers in commit order: "own" committed before "other".
            #expect(heard.count("own") == 1, "its own commit told its observers once, locally")

            // Announced, then rolled back: never heard. What the other commits next is.
            #expect(throws: StoreError.sessionExists("x")) {
                try second.storage.write(urgent: false, { transaction throws(StoreError) in
                    try transaction.announce(changed: ["rolled-back"], wallTimers: ["rolled-back"])
                    throw StoreError.sessionExists("x")
                }, committed: { _ in })
            }
            _ = try second.purge(id: "other")
            #expect(await eventually { heard.count("other") == 3 }, "a purge on the other server")
            #expect(heard.count("rolled-back") == 0)
            #expect(heard.wallTimerPokes == 0, "no wall session was written")
        }
    }

    @Test func aWallTimerArmedByTheOtherStorePokesThisOnesScheduler() async throws {
        try await withTwoStores { first, second, heard in
            var config = SessionConfig(uid: "u1")
            config.clock = .virtual
            _ = try second.create(id: "virtual", config: config)
            _ = try second.apply(.gesture(.pull(requestId: "p1")), to: "virtual")
            #expect(await eventually { heard.count("virtual") == 2 })
            #expect(heard.wallTimerPokes == 0, "a virtual session's timers are no scheduler's")
            config.clock = .wall
            _ = try second.create(id: "wall", config: config)
            _ = try second.apply(.gesture(.pull(requestId: "p1")), to: "wall")
            #expect(await eventually { heard.wallTimerPokes >= 1 }, "the pull armed a wall timer")
        }
    }

    @Test func newsLostWhileNotListeningIsReportedAsUnknown() async throws {
        try await withTwoStores { first, second, heard in
            let listening = try #require(first.storage as? PostgresStorage)
            listening.holdListening(true)
            _ = try second.create(id: "unheard", config: SessionConfig(uid: "u1"))
            listening.holdListening(false)
            #expect(await eventually { heard.unknownChanges == 1 }, "back: anything may have changed")
            #expect(heard.wallTimerPokes >= 1, "and the scheduler looks again")
            _ = try second.create(id: "heard", config: SessionConfig(uid: "u1"))
            #expect(await eventually { heard.count("heard") == 1 })
            #expect(heard.count("unheard") == 0, "sent while not listening: lost, hence `unknown`")
        }
    }

    /// A database restart ends the listening connection; it is opened again, and the first
    /// news after it is that anything may have changed. Closing the store ends its thread. The
    /// tries to connect again wait on the stores' clock, which the test moves (by the longest
    /// backoff at each look). The statement deadline, on the same clock, is set far beyond
    /// anything those moves add up to: a statement under way is never given up by them.
    @Test func afterADatabaseRestartTheStoresHearEachOtherAgain() async throws {
        let postgres = try await PostgresServer.started()
        let time = ManualTime()
        let first = try SessionStore.open(postgres.uri, time: time, statementDeadline: .seconds(100_000_000))
        let second = try SessionStore.open(postgres.uri, time: time, statementDeadline: .seconds(100_000_000))
        let heard = Heard(first)
        let longestWait = Millis(PostgresOutage.longestWait * 1000)
        _ = try second.create(id: "before", config: SessionConfig(uid: "u1"))
        #expect(await eventually { heard.count("before") == 1 })
        try await postgres.stop()
        try await postgres.start()
        #expect(await eventually { time.move(by: longestWait); return heard.unknownChanges >= 1 }, "listening again")
        #expect(await eventually {
            time.move(by: longestWait)
            return (try? second.create(id: "after", config: SessionConfig(uid: "u1"))) != nil
        }, "the other store writes again")
        #expect(await eventually { heard.count("after") == 1 })
        let closing = Date()
        first.close()
        second.close()
        // Unwoken, the listening thread's poll has no timeout and the close would wait for ever;
        // 60 s is a bound no healthy run comes near.
        #expect(Date().timeIntervalSince(closing) < 60, "closing wakes the listening thread from its poll")
    }
}

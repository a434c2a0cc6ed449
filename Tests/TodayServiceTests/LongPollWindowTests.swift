import Foundation
import Testing
import TodayHost
@testable import TodayServer
@testable import TodayStore
import TodayTestSupport

/// A `waitMs` long poll reads its page, finds it empty, and only then parks. An input committed
/// in between — here on another server on the same database, heard through LISTEN/NOTIFY before
/// the park — must still wake it: otherwise it sleeps out its whole wait with the entry stored
/// (issue 15, item 4: woken within 100 ms).
@Suite(.disabled(if: TestServer.onPostgres, "two stores on a database of their own: once, not once per store"))
struct LongPollWindowTests {
    final class Answer: @unchecked Sendable {
        private let lock = NSLock()
        private var response: HTTPResponse?
        func set(_ made: HTTPResponse) { lock.lock(); response = made; lock.unlock() }
        var status: Int? { lock.lock(); defer { lock.unlock() }; return response?.status }
    }

    final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add(_ ids: [String]) { lock.lock(); count += ids.filter { $0 == "s1" }.count; lock.unlock() }
        var times: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    @Test func anInputCommittedBetweenThePageReadAndTheParkWakesTheLongPoll() async throws {
        let database = try TestPostgres.database()
        let here = try SessionStore.open(database.uri)
        let other = try SessionStore.open(database.uri)
        defer { here.close(); other.close() }
        // On a clock the test holds, never moved: the 30 s wait cannot run out however long a
        // loaded machine starves this test, so the answer comes from the change or not at all.
        let waiters = TimelineWaiters(time: ManualTime())
        let reads = ReadPool(threads: 1)
        defer { waiters.stop(); reads.stop() }
        here.observeChanges { ids in waiters.sessionsChanged(ids) }
        // Registered after the waiters' observer: once it has heard, so have they.
        let heard = Heard()
        here.observeChanges { ids in heard.add(ids) }
        let handlers = SessionHandlers(store: here, scheduler: nil, waiters: waiters, expiry: nil, reads: reads, fields: FieldChecks())

        let created = try other.create(id: "s1", config: SessionConfig(uid: "u1"))
        #expect(await eventually { heard.times == 1 })
        let query = ["after": "\(created.stored.session.lastSeq)", "waitMs": "30000"]
        let request = HTTPRequest(method: "GET", path: "/v1/sessions/s1/timeline", query: { query[$0] })
        // The page is read now (nothing after `lastSeq`) ...
        let parked = try handlers.timeline(request, PathParameters(values: ["id": "s1"]))
        let park = try #require(parked.deferred, "an empty page with time to wait parks")
        // ... the other server commits, and this one hears of it, before the park ...
        _ = try other.apply(.lifecycle(.background), to: "s1")
        #expect(await eventually { heard.times == 2 })
        // ... which the server does right after (`HTTPServer.answer`, `ReadPool.offWorker`).
        let answer = Answer()
        park { make in answer.set(make()) }
        #expect(await eventually { answer.status != nil }, "the long poll was never answered")
        #expect(waiters.expired == 0, "the long poll slept out its 30 s although the entry it waits for is stored")
        withExtendedLifetime(database) {}
    }
}

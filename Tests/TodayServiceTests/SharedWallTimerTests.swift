import Foundation
import Testing
import TodayHost
import TodayStore
import TodayTestSupport

/// Issue 15, item 3: two servers on one PostgreSQL database, a `wall` session read by both.
/// A fired timer adds timeline entries but leaves the contract's `version` as it is, so a
/// server that compared versions took its cached session (from before the timer fired) for
/// current, fired the timer again and failed on the timeline's key: a 500 for the read.
@Suite(.disabled(if: TestServer.onPostgres, "uses a PostgreSQL database of its own: once, not once per store"))
struct SharedWallTimerTests {
    @Test func aTimerAnotherServerFiredIsReadNotFiredAgain() async throws {
        let database = try TestPostgres.database()
        let clock = ManualTime()
        let first = try TestServer(clock: clock, database: database.uri)
        let second = try TestServer(clock: clock, database: database.uri)
        let a = Client(server: first), b = Client(server: second)
        try await a.create(["uid": "u1", "id": "w1", "clock": "wall", "timing": ["softRefreshDeadlineMs": 300, "pullWatchdogMs": 600]])
        #expect(try await a.post("/v1/sessions/w1/gestures", ["type": "pull", "requestId": "p1"]).status == 200)
        let before = try await b.get("/v1/sessions/w1")
        #expect(before.status == 200, "the second server caches the session with both timers pending")

        clock.move(by: 1_000)
        let fired = try await a.get("/v1/sessions/w1")
        #expect(fired.status == 200 && fired.json["watchdogs"] == [], "the first server fires both: \(fired.text.prefix(300))")
        let read = try await b.get("/v1/sessions/w1")
        #expect(read.status == 200, "the second server reads what the first fired: \(read.text.prefix(300))")
        #expect(read.json == fired.json)
        let watchdogs = try await b.timeline("w1").filter { $0["kind"] == "watchdog" }
        #expect(watchdogs.count == 2, "each timer fired once: \(watchdogs)")
        withExtendedLifetime(database) {}
    }
}

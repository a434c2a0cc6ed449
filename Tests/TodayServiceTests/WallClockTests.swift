import Foundation
import Testing
import TodayHost
import TodayStore
import TodayTestSupport

/// `wall` sessions (C1): watchdogs fire on their own, and after a restart the ones that fell
/// due while the server was down fire at once, in due order.
///
/// These pass however they are run (alone, beside the whole suite, under a sanitizer). Where
/// the property is about the store's arithmetic (downtime, tags, idle time) the test moves a
/// `ManualTime` by hand and expects exact values. Where it is about real time passing (the
/// scheduler and the expiry thread waking on their own) the name starts with `realTime`: such a
/// test waits for the condition with a generous deadline and derives its bounds from the times
/// it observed, so load can only make it slower, not wrong.
@Suite struct WallClockTests {
    /// How many timers the server has fired (by `/metrics`, which reads no session: reading a
    /// `wall` session would catch it up and fire its due timers itself).
    func firedCount(_ client: Client) async throws -> Double {
        let text = try await client.get("/metrics").text
        return text.split(separator: "\n").filter { $0.hasPrefix("todaysim_watchdogs_fired_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }

    /// Waits until the server has fired `count` timers with no session read; returns when that
    /// was seen.
    func waitUntilFired(_ client: Client, _ count: Double) async throws -> Date {
        let fired = try await eventually { try await firedCount(client) >= count }
        #expect(fired, "\(count) timers fired on their own within 30 s")
        return Date()
    }

    func watchdogEntries(_ client: Client, _ id: String) async throws -> [JSON] {
        try await client.timeline(id).filter { $0["kind"] == "watchdog" }
    }

    /// A session with a 300 ms soft-refresh deadline and a 600 ms pull watchdog, both armed by
    /// a pull; returns the Unix time the pull was sent.
    func pullArmingTwoTimers(_ client: Client) async throws -> Date {
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall",
                                 "timing": ["softRefreshDeadlineMs": 300, "pullWatchdogMs": 600]])
        let sent = Date()
        #expect(try await client.post("/v1/sessions/w1/gestures", ["type": "pull", "requestId": "p1"]).status == 200)
        return sent
    }

    /// Fired by a scheduler the pull woke: its rescan is an hour, so one that was not woken
    /// (an input that forgot to poke it) would not fire them within the wait at all.
    @Test func realTimeWatchdogsFireOnTheirOwnInDueOrder() async throws {
        let server = try TestServer(rescanInterval: 3600)
        let client = Client(server: server)
        let pullSent = try await pullArmingTwoTimers(client)
        let seen = try await waitUntilFired(client, 2)
        let fired = try await watchdogEntries(client, "w1")
        #expect(fired.map { $0["type"] } == ["softRefreshDeadline", "pullWatchdog"])
        // Each entry carries its due time as atMs and how late it really fired: never early,
        // and never later than this client saw it (the pull left at `pullSent`, the entry was
        // there at `seen`; 2 ms for the server's whole-millisecond readings).
        let pulledAt = try #require(try await client.timeline("w1").first { $0["kind"] == "input" && $0["type"] == "pull" }?["atMs"]?.int64Value)
        let observedMs = Int64(seen.timeIntervalSince(pullSent) * 1000) + 2
        for (entry, delay) in zip(fired, [Int64(300), 600]) {
            #expect(entry["atMs"]?.int64Value == pulledAt + delay, "due: the pull's clock reading + its delay")
            let late = try #require(entry["data"]?["lateMs"]?.int64Value)
            #expect(late >= 0 && delay + late <= observedMs, "fired \(late) ms late; seen \(observedMs) ms after the pull")
        }
        let view = try await client.get("/v1/sessions/w1")
        #expect(view["watchdogs"] == [])
        #expect(view["pull"]?["requestId"] == .null)
        #expect((view["clock"]?["nowMs"]?.int64Value ?? 0) >= 600)
    }

    /// The same on a clock the test moves (`ManualTime`): the scheduler sleeps until the clock
    /// reaches a due time, so nothing fires at 299 ms, the deadline at 300 and the pull's
    /// watchdog at 600, each exactly on time — no real time passes, none is raced.
    @Test func watchdogsFireOnTheirOwnWhenTheClockReachesThem() async throws {
        let clock = ManualTime()
        let server = try TestServer(rescanInterval: 3600, clock: clock)
        let client = Client(server: server)
        _ = try await pullArmingTwoTimers(client)
        clock.move(by: 299)
        #expect(try await client.get("/v1/sessions/w1")["watchdogs"]?.arrayValue?.count == 2, "nothing is due at 299 ms")
        clock.move(by: 1)
        _ = try await waitUntilFired(client, 1)
        clock.move(by: 300)
        _ = try await waitUntilFired(client, 2)
        let fired = try await watchdogEntries(client, "w1")
        #expect(fired.map { $0["type"] } == ["softRefreshDeadline", "pullWatchdog"])
        #expect(fired.compactMap { $0["atMs"]?.int64Value } == [300, 600], "each at its due time")
        #expect(fired.compactMap { $0["data"]?["lateMs"]?.int64Value } == [0, 0], "no real time in between: never late")
    }

    /// A measurement, not a check (issue 20: no test asserts a latency; `Scripts/bench --wake`
    /// runs it with `TODAYSIM_MEASURE_WAKE=1`): how late each timer fires beyond the delays the
    /// machine imposed on this process meanwhile, with its goal of 50 ms beside it. A probe
    /// thread waiting as the scheduler does measures the worst wake-up delay; the scheduler's
    /// path from its due time to its clock reading can be held up twice (the wake-up, then the
    /// SQLite work on the writer before the reading), so the goal is 50 ms + twice the probe's
    /// worst. That the timers fire on their own at all is `realTimeWatchdogsFireOnTheirOwnInDueOrder`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TODAYSIM_MEASURE_WAKE"] != nil))
    func realTimeWatchdogLatencyBeyondTheMachinesWakeUpDelay() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let probe = WakeUpDelayProbe()
        _ = try await pullArmingTwoTimers(client)
        _ = try await waitUntilFired(client, 2)
        let machineMs = probe.stop()
        let lateness = try await watchdogEntries(client, "w1").compactMap { $0["data"]?["lateMs"]?.int64Value }
        #expect(lateness.count == 2 && lateness.allSatisfy { $0 >= 0 }, "\(lateness)")
        let goal = 50 + 2 * machineMs
        for late in lateness {
            print(String(format: "wall timer: fired %d ms late (goal <= %.1f ms: 50 ms + 2 x the machine's %.1f ms wake-up delay)%@",
                         late, goal, machineMs, Double(late) <= goal ? "" : " MISSED"))
        }
    }

    @Test func timersDueDuringDowntimeFireAtOnceAfterARestart() async throws {
        let clock = ManualTime()
        let server = try TestServer(clock: clock)
        var client = Client(server: server)
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall",
                                 "timing": ["softRefreshDeadlineMs": 400, "pullWatchdogMs": 500, "headerWatchdogMs": 450]])
        _ = try await client.post("/v1/sessions/w1/gestures", ["type": "pull", "requestId": "p1"])
        _ = try await client.post("/v1/sessions/w1/web-events", [
            "type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "c1", "presentation": "header",
        ])
        guard case let .array(pending)? = try await client.get("/v1/sessions/w1")["watchdogs"] else {
            Issue.record("the view lists no watchdogs")
            return
        }
        #expect(pending.count == 3, "nothing fell due yet: \(pending)")
        server.stop()
        clock.move(by: 900)
        try server.start()
        client = Client(server: server)
        // The restart fires them on its own: the counter moves with no read of the session.
        _ = try await waitUntilFired(client, 2)
        let fired = try await watchdogEntries(client, "w1")
        // The deadline (400) reloads the document, which clears the header: its watchdog goes
        // with it; the spinner follows the reload and its watchdog (500) fires next.
        #expect(fired.map { $0["type"] } == ["softRefreshDeadline", "pullWatchdog"])
        #expect(fired.compactMap { $0["atMs"]?.int64Value } == [400, 500], "in due order, each at its due time")
        #expect(fired.compactMap { $0["data"]?["lateMs"]?.int64Value } == [500, 400], "late by the downtime past their due times")
    }

    @Test func wallClockIncludesDowntimeAndNeverGoesBackPastAnInput() async throws {
        let clock = ManualTime()
        let server = try TestServer(clock: clock)
        var client = Client(server: server)
        let created = try await client.create(["uid": "u1", "id": "w1", "clock": "wall"])
        #expect(created["clock"]?["nowMs"] == 0)
        server.stop()
        clock.move(by: 300)
        try server.start()
        client = Client(server: server)
        #expect(try await client.get("/v1/sessions/w1")["clock"]?["nowMs"] == 300, "the downtime counts")
        let input = try await client.post("/v1/sessions/w1/lifecycle", ["type": "background"])
        #expect(input["session"]?["clock"]?["nowMs"] == 300)
        // The system clock steps back (NTP): the session clock stays where the input left it.
        clock.move(by: -200)
        #expect(try await client.get("/v1/sessions/w1")["clock"]?["nowMs"] == 300)
        clock.move(by: 250)
        #expect(try await client.get("/v1/sessions/w1")["clock"]?["nowMs"] == 350)
    }

    @Test func aWallSessionsTagMovesWhenATimerFiresButNotWithItsClock() async throws {
        let clock = ManualTime()
        let server = try TestServer(clock: clock)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "w1", "clock": "wall", "timing": ["softRefreshDeadlineMs": 200]])
        _ = try await client.post("/v1/sessions/w1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        let before = try await client.get("/v1/sessions/w1")
        let tag = try #require(before.header("ETag"))
        clock.move(by: 199)
        let moved = try await client.get("/v1/sessions/w1")
        #expect(moved["clock"]?["nowMs"] == 199)
        #expect(moved.header("ETag") == tag)
        let again = try await client.send("GET", "/v1/sessions/w1", headers: ["If-None-Match": tag])
        #expect(again.status == 304, "only the wall clock moved")
        clock.move(by: 1)
        let after = try await client.send("GET", "/v1/sessions/w1", headers: ["If-None-Match": tag])
        #expect(after.status == 200, "the deadline fired: a timeline entry, no input")
        #expect(after["version"] == before["version"])
        #expect(after.header("ETag") != tag)
    }

    /// The idle time and the retention, to the millisecond: the expiry pass (what the expiry
    /// thread runs when it wakes) is called at chosen clock readings.
    @Test func anInputRestartsTheIdleTimeAndTheRetentionCountsFromTheClose() async throws {
        let clock = ManualTime()
        let server = try TestServer(retentionMs: 600, clock: clock)
        let client = Client(server: server)
        let store = try #require(server.store)
        try await client.create(["uid": "u1", "id": "idle", "clock": "wall", "ttlMs": 300])
        try await client.create(["uid": "u1", "id": "kept", "clock": "wall"])
        clock.move(by: 200)
        #expect(try await client.post("/v1/sessions/idle/lifecycle", ["type": "tabActivated"]).status == 200)
        clock.move(by: 299)
        _ = try store.closeIdleSessions()
        #expect(try await client.get("/v1/sessions/idle")["status"] == "active", "499 ms old, idle for 299 ms")
        clock.move(by: 1)
        _ = try store.closeIdleSessions()
        #expect(try await client.get("/v1/sessions/idle")["status"] == "closed", "idle for its 300 ms ttl")
        let inputs = try await client.timeline("idle").filter { $0["kind"] == "input" }
        #expect(inputs.last?["type"] == "teardown", "the expiry is a teardown like any other (H20)")
        _ = try store.purgeClosed(olderThan: 600)
        clock.move(by: 599)
        _ = try store.purgeClosed(olderThan: 600)
        #expect(try await client.get("/v1/sessions/idle")["status"] == "closed", "closed for 599 ms, kept readable")
        clock.move(by: 1)
        _ = try store.purgeClosed(olderThan: 600)
        expectProblem(try await client.get("/v1/sessions/idle"), 404, "session_not_found")
        #expect(try await client.get("/v1/sessions/kept")["status"] == "active", "no ttlMs: never expires")
    }

    /// The expiry thread closes an idle session on its own. No retention here: a purge must not
    /// race the observation of the close (one request may take seconds beside a loaded run).
    /// The bound comes from what was observed: the close cannot be seen before the ttl has
    /// passed since the creation was sent.
    @Test func realTimeAnIdleSessionClosesOnItsOwnAfterItsTtl() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        let sent = Date()
        try await client.create(["uid": "u1", "id": "idle", "clock": "wall", "ttlMs": 300])
        try await client.create(["uid": "u1", "id": "kept", "clock": "wall"])
        var status = JSON.null
        #expect(try await eventually {
            status = try await client.get("/v1/sessions/idle")["status"] ?? .null
            return status != "active"
        })
        let closedSeen = Date().timeIntervalSince(sent)
        #expect(status == "closed", "closed without input, kept readable")
        #expect(closedSeen >= 0.3, "not before its 300 ms ttl (seen closed \(closedSeen) s after the creation was sent)")
        let inputs = try await client.timeline("idle").filter { $0["kind"] == "input" }
        #expect(inputs.last?["type"] == "teardown", "the expiry is a teardown like any other (H20)")
        #expect(try await client.get("/v1/sessions/kept")["status"] == "active", "no ttlMs: never expires")
        expectProblem(try await client.post("/v1/sessions", ["uid": "u", "ttlMs": 0]), 400, "invalid_field", field: "ttlMs")
    }

    /// The expiry thread on a clock the test moves: it closes the idle session when the clock
    /// passes its ttl and purges it when it passes the retention, with no real time raced.
    @Test func anIdleSessionClosesAndIsPurgedOnItsOwnWhenTheClockPassesItsTtlAndRetention() async throws {
        let clock = ManualTime()
        let server = try TestServer(retentionMs: 600, clock: clock)
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "idle", "clock": "wall", "ttlMs": 300])
        try await client.create(["uid": "u1", "id": "kept", "clock": "wall"])
        clock.move(by: 299)
        #expect(try await client.get("/v1/sessions/idle")["status"] == "active", "idle for 299 ms of its 300")
        clock.move(by: 1)
        #expect(try await eventually { try await client.get("/v1/sessions/idle")["status"] == "closed" },
                "the expiry thread closed it when the clock reached its ttl")
        clock.move(by: 599)
        #expect(try await client.get("/v1/sessions/idle")["status"] == "closed", "closed for 599 ms of the 600 kept")
        clock.move(by: 1)
        #expect(try await eventually { try await client.get("/v1/sessions/idle").status == 404 },
                "purged when the clock passed the retention")
        #expect(try await client.get("/v1/sessions/kept")["status"] == "active", "no ttlMs: never expires")
    }

    /// The expiry thread purges a closed session on its own once the retention has passed: it
    /// cannot be seen gone before the ttl and the retention have passed since the creation was
    /// sent.
    @Test func realTimeAClosedSessionIsPurgedOnItsOwnAfterTheRetention() async throws {
        let server = try TestServer(retentionMs: 600)
        let client = Client(server: server)
        let sent = Date()
        try await client.create(["uid": "u1", "id": "idle", "clock": "wall", "ttlMs": 300])
        try await client.create(["uid": "u1", "id": "kept", "clock": "wall"])
        #expect(try await eventually { try await client.get("/v1/sessions/idle").status == 404 })
        let purgedSeen = Date().timeIntervalSince(sent)
        #expect(purgedSeen >= 0.9, "not before the 300 ms ttl and the 600 ms retention (seen purged after \(purgedSeen) s)")
        expectProblem(try await client.get("/v1/sessions/idle"), 404, "session_not_found")
        #expect(try await client.get("/v1/sessions/kept").status == 200, "an active session is never purged")
    }
}

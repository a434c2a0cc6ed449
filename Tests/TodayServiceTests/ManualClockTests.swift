import Foundation
import Testing
import TodayHost
@testable import TodayServer
@testable import TodayStore
import TodayTestSupport

/// The server's deadlines, limits and intervals run on the clock it is given (issue 46, item 5):
/// on a `ManualTime` each one passes when the test moves the clock past it, never while the
/// test waits. Every interval here is an hour, so an implementation that still read this
/// machine's clock could not pass: nothing would happen within the tests' waits.
@Suite struct ManualClockTests {
    private static let hourMs: Millis = 3_600_000

    /// The whole-request deadline (issue 7) on the clock: a head that never ends stands at
    /// exactly the deadline and is cut at the checker's first turn past it.
    @Test func aRequestThatNeverArrivesIsCutWhenTheClockPassesItsDeadline() async throws {
        let clock = ManualTime()
        let server = try HTTPServer(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 7200, requestDeadline: 3600,
                                    log: RequestLog(enabled: false), connectionTime: clock,
                                    respond: { _ in (.json(["whole": true]), routeName: "other") })
        defer { server.stop(grace: 0) }
        let connection = try RawConnection(port: server.port)
        connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")  // the head never ends
        // Watched from a reading of the clock, and the checker waiting on the clock for its next turn.
        #expect(await eventually { server.deadlines.watched == 1 }, "the connection was never watched")
        #expect(await server.moveDeadlineClock(clock, by: Self.hourMs), "the checker never looked at the moved clock")
        #expect(server.deadlines.cut == 0, "at exactly its deadline the request still stands")
        clock.move(by: 1_000)  // the checker's next second
        #expect(await eventually { server.deadlines.cut == 1 }, "the request was not cut past its deadline")
        #expect(await connection.closedByServer(), "the cut connection stayed open")
    }

    /// The deadline covers a request's arrival, not its answer: a handler that takes the clock
    /// two deadlines past (a 1 MiB body of 200,000 values parsed on a loaded machine took a CI
    /// run more than the abuse tests' 3 s) is answered, not cut. Before the fix the time from the
    /// body's end to the answer counted against the client, and the checker shut the socket.
    @Test func aRequestWhoseHandlerRunsPastItsDeadlineIsAnswered() async throws {
        let clock = ManualTime()
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let server = try HTTPServer(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 7200, requestDeadline: 3600,
                                    log: RequestLog(enabled: false), connectionTime: clock,
                                    respond: { request in
                                        entered.signal()
                                        release.wait()
                                        return (.json(["received": .int(Int64(request.body.count))]), routeName: "held")
                                    })
        defer { server.stop(grace: 0) }
        let connection = try RawConnection(port: server.port)
        connection.send("POST /held HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(await offThePool { entered.wait(timeout: .now() + 300) == .success }, "the handler never ran")
        #expect(await server.moveDeadlineClock(clock, by: 2 * Self.hourMs), "the checker never looked at the moved clock")
        #expect(server.deadlines.cut == 0, "a request being answered was cut")
        release.signal()
        let answer = try #require(await connection.readAnswer(timeout: 300), "no answer: the connection was cut")
        #expect(answer.status == 200)
        #expect(answer.json == ["received": 2], "\(answer)")
    }

    /// `--max-connections`' note (issue 12, item 11): refusals are noted once per interval of
    /// the clock, the next note counting those in between.
    @Test func refusalsPastTheConnectionLimitAreNotedOncePerIntervalOfTheClock() {
        let clock = ManualTime()
        let notes = LockedLines()
        let limit = ConnectionLimit(limit: 1, noteInterval: 3600, time: clock) { line in notes.append(line) }
        let connections = (1...5).map { OpaquePointer(bitPattern: 0x1000 * $0)! }
        limit.opened(connections[0])
        #expect(notes.all.isEmpty, "a connection within the limit is not noted")
        limit.opened(connections[1])
        #expect(notes.all.count == 1, "the first refusal is noted")
        limit.opened(connections[2])
        clock.move(by: Self.hourMs - 1)
        limit.opened(connections[3])
        #expect(notes.all.count == 1, "within the interval refusals are counted, not noted: \(notes.all)")
        clock.move(by: 1)
        limit.opened(connections[4])
        #expect(notes.all.count == 2, "\(notes.all)")
        #expect(notes.all.last?.contains("(3 since the last note") == true, "\(notes.all)")
        #expect(connections.dropFirst().allSatisfy(limit.isRefused) && !limit.isRefused(connections[0]))
    }

    /// An event stream's heartbeat comes when the clock reaches its interval, not before.
    @Test func anEventStreamsHeartbeatComesWhenTheClockReachesItsInterval() async throws {
        let clock = ManualTime()
        let store = try SessionStore(path: ":memory:")
        let streams = EventStreams(store: store, heartbeat: 3600, time: clock)
        defer {
            streams.stop()
            store.close()
        }
        let stored = try store.create(id: "s1", config: SessionConfig(uid: "u1")).stored
        let stream = streams.follow(session: "s1", ord: stored.ord, after: stored.session.lastSeq)
        #expect(await eventually { clock.waits == 1 }, "the stream's loop never waited on the clock")
        let begun = clock.waitsBegun
        clock.move(by: Self.hourMs - 1)
        #expect(await eventually { clock.waitsBegun > begun && clock.waits == 1 }, "the loop never looked at the moved clock")
        #expect(!stream.queuedText.contains(": heartbeat"), "a heartbeat before its interval: \(stream.queuedText)")
        clock.move(by: 1)
        #expect(await eventually { stream.queuedText.contains(": heartbeat") }, "no heartbeat at its interval")
    }

    /// A timeline long poll (`waitMs`) with nothing new ends when the service's clock reaches its
    /// wait, answered as a wait that ran out: an empty page.
    @Test func aLongPollWithNothingNewEndsWhenTheClockReachesItsWait() async throws {
        let clock = ManualTime()
        let server = try TestServer(longestWaitMs: Int(Self.hourMs), serviceClock: clock)
        try await Client(server: server).create(["uid": "u1", "id": "s1"])
        let last = try await Client(server: server).timeline("s1").last?["seq"]?.int64Value ?? 0
        let connection = try RawConnection(port: server.server!.port)
        connection.send("GET /v1/sessions/s1/timeline?after=\(last)&waitMs=\(Self.hourMs) HTTP/1.1\r\nHost: x\r\n\r\n")
        let waiters = server.service!.waiters
        // Two loops wait on the service's clock: the long polls' and the streams' heartbeat.
        #expect(await eventually { waiters.count == 1 && clock.waits == 2 }, "the long poll never parked")
        let begun = clock.waitsBegun
        clock.move(by: Self.hourMs - 1)
        #expect(await eventually { clock.waitsBegun >= begun + 2 && clock.waits == 2 }, "the loops never looked at the moved clock")
        #expect(waiters.count == 1 && waiters.expired == 0, "the wait ended before its time")
        clock.move(by: 1)
        let answer = try #require(await connection.readAnswer(), "the long poll was not answered at the end of its wait")
        #expect(answer.status == 200)
        #expect(answer.json == ["entries": [], "next": .int(last), "more": false], "\(answer)")
        #expect(waiters.expired == 1, "answered as a wait that ran out")
    }
}

extension HTTPServer {
    /// One turn of the request-deadline checker on a clock the test moves (`connectionTime`):
    /// waits until the checker waits on `clock`, moves it `ms`, and waits until the checker has
    /// looked at the moved clock and waits again. `false` when either wait ran out.
    func moveDeadlineClock(_ clock: ManualTime, by ms: Millis) async -> Bool {
        guard await eventually({ clock.waits == 1 }) else { return false }
        let turns = deadlineChecks
        clock.move(by: ms)
        return await eventually { deadlineChecks > turns && clock.waits == 1 }
    }
}

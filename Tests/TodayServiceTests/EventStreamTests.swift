import Foundation
import Testing
import TodayHost
import TodayTestSupport

/// Server-Sent Events, read by curl as a browser's EventSource would.
@Suite struct EventStreamTests {
    struct Event: Equatable {
        var id: String
        var event: String
        var data: JSON
    }

    /// Starts `curl -N` on `path` and reads what arrives as it arrives. A test waits for the
    /// events it expects (`until`) or for the server to end the stream (`finish`), each with a
    /// generous deadline, never for a fixed window: curl's own `--max-time` is only a backstop.
    final class Listener: @unchecked Sendable {
        let process: ChildProcess
        private let lock = NSLock()
        // Guarded by `lock`.
        private var text = ""
        private var drained = false

        init(_ server: TestServer, _ path: String, headers: [String] = []) throws {
            process = try ChildProcess("curl", ["-sN", "--max-time", "900"] + headers.flatMap { ["-H", $0] }
                + [server.base.absoluteString + path], output: .pipe)
            // A thread of its own blocks on the pipe, never one of the test runner's.
            let handle = process.standardOutput!
            Thread { [self] in
                while true {
                    let chunk = handle.availableData
                    lock.lock()
                    if chunk.isEmpty { drained = true }
                    text += String(decoding: chunk, as: UTF8.self)
                    lock.unlock()
                    if chunk.isEmpty { return }
                }
            }.start()
        }

        var parsed: (events: [Event], comments: [String]) {
            lock.lock()
            let current = text
            lock.unlock()
            var events: [Event] = []
            var comments: [String] = []
            for block in current.components(separatedBy: "\n\n").dropLast() where !block.isEmpty {
                var fields: [String: String] = [:]
                for line in block.split(separator: "\n") {
                    if line.hasPrefix(":") { comments.append(String(line)); continue }
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    fields[String(parts[0])] = String(parts[1].dropFirst())
                }
                if let id = fields["id"], let event = fields["event"], let data = fields["data"] {
                    events.append(Event(id: id, event: event, data: (try? JSON.parse(data)) ?? .null))
                }
            }
            return (events, comments)
        }

        private var isDrained: Bool {
            lock.lock()
            defer { lock.unlock() }
            return drained
        }

        /// Reads until what arrived satisfies `done` (or `seconds` pass), then closes the stream
        /// and returns what arrived.
        func until(within seconds: Double = 300, _ done: ([Event], [String]) -> Bool) async -> (events: [Event], comments: [String]) {
            await eventually(within: seconds) {
                let (events, comments) = parsed
                return done(events, comments) || !process.isRunning
            }
            return await finish(within: 0)
        }

        /// Waits, without blocking a thread of the test runner, for the server to end the
        /// stream (curl exits; after `seconds` it is stopped) and parses all that arrived.
        func finish(within seconds: Double = 300) async -> (events: [Event], comments: [String]) {
            await eventually(within: seconds) { !process.isRunning }
            process.signal(SIGKILL)
            await eventually { !process.isRunning && isDrained }
            return parsed
        }

        /// Whether curl ended by itself with success: the server closed the stream cleanly.
        var endedCleanly: Bool { process.terminationStatus == 0 }
    }

    func waitForStreams(_ server: TestServer, _ count: Int) async {
        #expect(await eventually { server.service!.streams.count >= count }, "\(count) streams open")
    }

    @Test func realTimeAStreamSendsEveryEntryAndResumesWithoutLossOrRepeat() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try Listener(server, "/v1/sessions/s1/events")
        await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let timeline = try await client.timeline("s1")
        let (events, comments) = await first.until { events, comments in
            events.count >= timeline.count && comments.contains(": heartbeat")
        }
        #expect(events.map(\.id) == timeline.map { "\($0["seq"]!.int64Value!)" })
        #expect(events.map(\.event) == timeline.map { $0["kind"]!.stringValue! })
        #expect(events.map(\.data) == timeline)
        #expect(comments.contains(": heartbeat"), "heartbeats keep the stream alive")

        // Reconnect after the last id seen; new entries arrive exactly once.
        let lastSeen = try #require(events.last?.id)
        let second = try Listener(server, "/v1/sessions/s1/events", headers: ["Last-Event-ID: \(lastSeen)"])
        await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        let all = try await client.timeline("s1")
        let resumed = await second.until { resumed, _ in events.count + resumed.count >= all.count }.events
        #expect((events + resumed).map(\.data) == all)
    }

    @Test func aStreamEndsWhenItsSessionIsPurgedOrTheServerStops() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1", "label": "gone"])
        try await client.create(["uid": "u1", "id": "s2"])
        let purged = try Listener(server, "/v1/sessions/s1/events")
        let stopped = try Listener(server, "/v1/sessions/s2/events")
        await waitForStreams(server, 2)
        _ = try await client.delete("/v1/sessions?label=gone")
        #expect(await purged.finish().events.count == 4)
        #expect(purged.endedCleanly, "the server ended the purged session's stream (curl did not time out or fail)")
        server.stop()
        #expect(await stopped.finish().events.count == 4)
        #expect(stopped.endedCleanly, "the server ended the stream as it stopped")
    }

    @Test func anAccountStreamCarriesItsSessionsOnly() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "alice", "id": "a1"])
        try await client.create(["uid": "bob", "id": "b1"])
        let listener = try Listener(server, "/v1/events?uid=alice")
        await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/a1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        _ = try await client.post("/v1/sessions/b1/lifecycle", ["type": "tabActivated", "requestId": "t2"])
        try await client.create(["uid": "alice", "id": "a2"])
        // Bob's input came before a2's creation: had it leaked, it would be there by a2's last entry.
        let events = await listener.until { events, _ in
            events.filter { $0.id.hasPrefix("a1/") }.count >= 2 && events.filter { $0.id.hasPrefix("a2/") }.count >= 4
        }.events
        #expect(Set(events.map { $0.id.split(separator: "/")[0] }) == ["a1", "a2"])
        #expect(events.filter { $0.id.hasPrefix("a1/") }.map(\.id) == ["a1/5", "a1/6"])
        #expect(events.filter { $0.id.hasPrefix("a2/") }.count == 4)
        expectProblem(try await client.get("/v1/events"), 400, "invalid_field", field: "uid")
    }
}

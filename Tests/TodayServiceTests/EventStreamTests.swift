import Foundation
import Testing
import TodayHost

/// Server-Sent Events, read by curl as a browser's EventSource would.
@Suite struct EventStreamTests {
    struct Event: Equatable {
        var id: String
        var event: String
        var data: JSON
    }

    /// Starts `curl -N` on `path` and reads what arrives as it arrives.
    final class Listener: @unchecked Sendable {
        let process = Process()
        let output = Pipe()
        private let lock = NSLock()
        private var text = ""

        init(_ server: TestServer, _ path: String, seconds: Double, headers: [String] = []) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-sN", "--max-time", "\(seconds)"] + headers.flatMap { ["-H", $0] }
                + [server.base.absoluteString + path]
            process.standardOutput = output
            try process.run()
            // A thread of its own blocks on the pipe, never one of the test runner's.
            let handle = output.fileHandleForReading
            Thread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    lock.lock()
                    text += String(decoding: chunk, as: UTF8.self)
                    lock.unlock()
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

        /// Waits, without blocking a thread of the test runner, for curl to end (at its
        /// `--max-time`, or when the server ends the stream) and parses what arrived.
        func finish(within seconds: Double = 25) async -> (events: [Event], comments: [String]) {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
            if process.isRunning { process.terminate() }
            while process.isRunning { try? await Task.sleep(nanoseconds: 10_000_000) }
            try? await Task.sleep(nanoseconds: 50_000_000)  // the reader thread's last chunk
            return parsed
        }
    }

    func waitForStreams(_ server: TestServer, _ count: Int) async throws {
        let deadline = Date().addingTimeInterval(5)
        while server.service!.streams.count < count, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
    }

    @Test func aStreamSendsEveryEntryAndResumesWithoutLossOrRepeat() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try Listener(server, "/v1/sessions/s1/events", seconds: 3)
        try await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let (events, comments) = await first.finish()
        let timeline = try await client.timeline("s1")
        #expect(events.map(\.id) == timeline.map { "\($0["seq"]!.int64Value!)" })
        #expect(events.map(\.event) == timeline.map { $0["kind"]!.stringValue! })
        #expect(events.map(\.data) == timeline)
        #expect(comments.contains(": heartbeat"), "heartbeats keep the stream alive")

        // Reconnect after the last id seen; new entries arrive exactly once.
        let lastSeen = try #require(events.last?.id)
        let second = try Listener(server, "/v1/sessions/s1/events", seconds: 3, headers: ["Last-Event-ID: \(lastSeen)"])
        try await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        let resumed = await second.finish().events
        let all = try await client.timeline("s1")
        #expect((events + resumed).map(\.data) == all)
    }

    @Test func aStreamEndsWhenItsSessionIsPurgedOrTheServerStops() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1", "label": "gone"])
        try await client.create(["uid": "u1", "id": "s2"])
        let purged = try Listener(server, "/v1/sessions/s1/events", seconds: 20)
        let stopped = try Listener(server, "/v1/sessions/s2/events", seconds: 20)
        try await waitForStreams(server, 2)
        let started = Date()
        _ = try await client.delete("/v1/sessions?label=gone")
        #expect(await purged.finish().events.count == 4)
        server.stop()
        #expect(await stopped.finish().events.count == 4)
        #expect(Date().timeIntervalSince(started) < 10, "both ended cleanly, well before curl's own limit")
    }

    @Test func anAccountStreamCarriesItsSessionsOnly() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "alice", "id": "a1"])
        try await client.create(["uid": "bob", "id": "b1"])
        let listener = try Listener(server, "/v1/events?uid=alice", seconds: 4)
        try await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/a1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        _ = try await client.post("/v1/sessions/b1/lifecycle", ["type": "tabActivated", "requestId": "t2"])
        try await client.create(["uid": "alice", "id": "a2"])
        let events = await listener.finish().events
        #expect(Set(events.map { $0.id.split(separator: "/")[0] }) == ["a1", "a2"])
        #expect(events.filter { $0.id.hasPrefix("a1/") }.map(\.id) == ["a1/5", "a1/6"])
        #expect(events.filter { $0.id.hasPrefix("a2/") }.count == 4)
        expectProblem(try await client.get("/v1/events"), 400, "invalid_field", field: "uid")
    }
}

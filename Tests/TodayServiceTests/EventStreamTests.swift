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

    /// Starts `curl -N` on `path`; `finish()` waits for it (it stops at `seconds`) and parses.
    final class Listener: @unchecked Sendable {
        let process = Process()
        let output = Pipe()

        init(_ server: TestServer, _ path: String, seconds: Double, headers: [String] = []) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-sN", "--max-time", "\(seconds)"] + headers.flatMap { ["-H", $0] }
                + [server.base.absoluteString + path]
            process.standardOutput = output
            try process.run()
        }

        func finish() -> (events: [Event], comments: [String]) {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            var events: [Event] = []
            var comments: [String] = []
            for block in text.components(separatedBy: "\n\n") where !block.isEmpty {
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
    }

    func waitForStreams(_ server: TestServer, _ count: Int) async throws {
        let deadline = Date().addingTimeInterval(5)
        while server.service!.streams.count < count, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
    }

    @Test func aStreamSendsEveryEntryAndResumesWithoutLossOrRepeat() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "u1", "id": "s1"])
        let first = try Listener(server, "/v1/sessions/s1/events", seconds: 1.5)
        try await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/s1/gestures", ["type": "pull", "requestId": "p1"])
        let (events, comments) = first.finish()
        let timeline = try await client.timeline("s1")
        #expect(events.map(\.id) == timeline.map { "\($0["seq"]!.int64Value!)" })
        #expect(events.map(\.event) == timeline.map { $0["kind"]!.stringValue! })
        #expect(events.map(\.data) == timeline)
        #expect(comments.contains(": heartbeat"), "heartbeats keep the stream alive")

        // Reconnect after the last id seen; new entries arrive exactly once.
        let lastSeen = try #require(events.last?.id)
        let second = try Listener(server, "/v1/sessions/s1/events", seconds: 1.5, headers: ["Last-Event-ID: \(lastSeen)"])
        try await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/s1/lifecycle", ["type": "background"])
        let resumed = second.finish().events
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
        #expect(purged.finish().events.count == 4)
        server.stop()
        #expect(stopped.finish().events.count == 4)
        #expect(Date().timeIntervalSince(started) < 10, "both ended cleanly, well before curl's own limit")
    }

    @Test func anAccountStreamCarriesItsSessionsOnly() async throws {
        let server = try TestServer()
        let client = Client(server: server)
        try await client.create(["uid": "alice", "id": "a1"])
        try await client.create(["uid": "bob", "id": "b1"])
        let listener = try Listener(server, "/v1/events?uid=alice", seconds: 1.5)
        try await waitForStreams(server, 1)
        _ = try await client.post("/v1/sessions/a1/lifecycle", ["type": "tabActivated", "requestId": "t1"])
        _ = try await client.post("/v1/sessions/b1/lifecycle", ["type": "tabActivated", "requestId": "t2"])
        try await client.create(["uid": "alice", "id": "a2"])
        let events = listener.finish().events
        #expect(Set(events.map { $0.id.split(separator: "/")[0] }) == ["a1", "a2"])
        #expect(events.filter { $0.id.hasPrefix("a1/") }.map(\.id) == ["a1/5", "a1/6"])
        #expect(events.filter { $0.id.hasPrefix("a2/") }.count == 4)
        expectProblem(try await client.get("/v1/events"), 400, "invalid_field", field: "uid")
    }
}

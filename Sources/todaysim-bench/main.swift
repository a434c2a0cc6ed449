import Foundation
import TodayHost
import TodayStore

/// The storage ceiling of `Scripts/bench`: SQLite alone, from Swift, committing per iteration
/// what one input commits — update one session row holding a ~2 KB state and insert three
/// ~200-byte timeline rows, in one transaction, with the service's schema and pragmas.
///
///   todaysim-bench storage [--seconds 3] [--synchronous normal|full] [--db PATH]
///
/// Prints one line: `storage <synchronous> <transactions/s> tx/s`.
enum StorageCeiling {
    static func main(_ arguments: [String]) throws -> Int32 {
        var seconds = 3.0
        var synchronous = "NORMAL"
        var path: String?
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchError.usage }
            switch flag {
            case "--seconds": seconds = Double(value) ?? seconds
            case "--synchronous": synchronous = value.uppercased()
            case "--db": path = value
            default: throw BenchError.usage
            }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-ceiling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let databasePath = path ?? directory.appendingPathComponent("ceiling.sqlite").path

        // The service's own schema and pragmas, then its durability setting.
        _ = try SessionStore(path: databasePath)
        let database = try Database(path: databasePath)
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = \(synchronous)")
        try database.execute("""
            INSERT INTO sessions (id, uid, label, closed, clock, wall_origin_ms, next_due_ms, version, state)
            VALUES ('ceiling', 'u1', NULL, 0, 'virtual', 0, NULL, 1, x'00')
            """)
        let update = try database.prepare("UPDATE sessions SET uid = ?, closed = ?, next_due_ms = ?, version = ?, state = ? WHERE ord = 1")
        let insert = try database.prepare("INSERT INTO timeline (session, seq, kind, entry) VALUES (?, ?, ?, ?)")
        let state = [UInt8](repeating: UInt8(ascii: "s"), count: 2048)
        let entry = [UInt8](repeating: UInt8(ascii: "e"), count: 200)

        var seq: Int64 = 0
        var transactions = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < end {
            try database.execute("BEGIN IMMEDIATE")
            try update.run([.text("u1"), .integer(0), .integer(5000), .integer(Int64(transactions + 2)), .blob(state)])
            for _ in 0..<3 {
                seq += 1
                try insert.run([.integer(1), .integer(seq), .text("emit"), .blob(entry)])
            }
            try database.execute("COMMIT")
            transactions += 1
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print("storage \(synchronous.lowercased()) \(Int(Double(transactions) / elapsed)) tx/s")
        return 0
    }
}

/// Where a write's CPU goes: encoding the state, building the view, serializing entries.
///   todaysim-bench encode
enum EncodingCosts {
    static func main() throws -> Int32 {
        var runner = try SessionRunner(config: SessionConfig(uid: "u1"))
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": "w1", "presentation": "header"]))
        try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
        let session = runner.session
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let encoded = try encoder.encode(session)
        let iterations = 20_000
        func time(_ name: String, _ body: () throws -> Void) rethrows {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<iterations { try body() }
            let micros = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations) / 1000
            print("\(name): \(String(format: "%.1f", micros)) µs")
        }
        print("state JSON: \(encoded.count) bytes")
        try time("JSONEncoder(HostSession)") { _ = try encoder.encode(session) }
        try time("JSONDecoder(HostSession)") { _ = try decoder.decode(HostSession.self, from: encoded) }
        time("view build+serialize") { var bytes: [UInt8] = []; session.view.write(to: &bytes) }
        time("entries serialize") { for entry in runner.timeline.suffix(4) { _ = entry.json.serialized() } }
        time("watchdogs") { _ = session.watchdogs }
        return 0
    }
}

/// The store and engine alone (no HTTP): the web-events cycle applied in a loop.
///   todaysim-bench store [--seconds 3]
enum StoreThroughput {
    static func main(_ arguments: [String]) throws -> Int32 {
        let seconds = arguments.count >= 2 ? Double(arguments[1]) ?? 3 : 3
        let sessions = arguments.count >= 4 ? Int(arguments[3]) ?? 64 : 64
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SessionStore(path: directory.appendingPathComponent("s.sqlite").path)
        for index in 0..<64 { _ = try store.create(id: "bench-\(index)", config: SessionConfig(uid: "u\(index)")) }
        var count = 0
        var viewTime: UInt64 = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < end {
            let id = "r\(count / 5)"
            let input: Input
            switch count % 5 {
            case 0: input = .gesture(.pull(requestId: id))
            case 1: input = .webEvent(["type": "webView.loadingPresentation", "owner": "web"])
            case 2: input = .webEvent(["type": "todayPage.firstBatchRendered", "schemaVersion": 1, "batchId": "b1", "elapsedMs": 4, "requestId": .string(id)])
            case 3: input = .webEvent(["type": "todayPage.allBatchesRendered", "schemaVersion": 1, "status": "succeeded", "empty": false, "elapsedMs": 8, "requestId": .string(id)])
            default: input = .webEvent(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(id), "mode": "soft", "status": "succeeded"])
            }
            let write = try applied(input, to: "bench-\(count % sessions)", in: store)
            let viewStart = DispatchTime.now().uptimeNanoseconds
            _ = write.viewBytes
            viewTime += DispatchTime.now().uptimeNanoseconds - viewStart
            count += 1
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print("store \(Int(Double(count) / elapsed)) inputs/s, view \(String(format: "%.1f", Double(viewTime) / Double(count) / 1000)) µs each")
        return 0
    }
}

enum BenchError: Error {
    case usage
    case replayed
}

/// One input through the store's one way in, waited for (a server answers its request from the
/// writer thread instead).
func applied(_ input: Input, to id: String, in store: SessionStore) throws -> SessionStore.Write {
    final class Outcome: @unchecked Sendable { var result: Result<SessionStore.Submitted, StoreError>? }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    store.apply(steps: [.input(input)], to: id) { result in
        outcome.result = result
        done.signal()
    }
    done.wait()
    guard case let .applied(writes, _) = try outcome.result!.get(), let write = writes.first else { throw BenchError.replayed }
    return write
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "storage": exit(try StorageCeiling.main(Array(arguments.dropFirst())))
    case "encode": exit(try EncodingCosts.main())
    case "store": exit(try StoreThroughput.main(Array(arguments.dropFirst())))
    default: throw BenchError.usage
    }
} catch BenchError.usage {
    FileHandle.standardError.write(Data("usage: todaysim-bench storage [--seconds S] [--synchronous normal|full] [--db PATH]\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("todaysim-bench: \(error)\n".utf8))
    exit(1)
}

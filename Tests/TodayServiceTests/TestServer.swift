import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TodayHost
import TodayServer
import TodayStore
import TodayTestSupport

/// The real server on an ephemeral loopback port with a temporary database, for one test: a
/// SQLite file, or with `TODAYSIM_TEST_STORE=postgres` a fresh PostgreSQL database (issue 14:
/// `Scripts/test` runs these tests once per store).
final class TestServer: @unchecked Sendable {
    /// Whether this run's servers store their sessions in PostgreSQL.
    static let onPostgres = ProcessInfo.processInfo.environment["TODAYSIM_TEST_STORE"] == "postgres"

    let directory: URL
    /// The SQLite file (tests of SQLite's own behaviour only run on it).
    let databasePath: String
    /// What the server opens: the SQLite file or the PostgreSQL database's URI.
    let database: String
    private let postgres: TestDatabase?
    private(set) var server: HTTPServer?
    private(set) var scheduler: WallClockScheduler?
    private(set) var service: TodayService?
    private(set) var expiry: SessionExpiry?
    private(set) var store: SessionStore?
    let retentionMs: Millis?
    /// The store's time when the test moves it by hand (`ManualTime`: the scheduler and the
    /// expiry wake at each move); this machine's otherwise.
    let clock: ManualTime?
    /// The clock the service's long polls and streams' heartbeats run on, when the test moves it
    /// (apart from `clock`: a test moving the store's clock past a drain's grace does not also
    /// end every long poll); this machine's otherwise.
    let serviceClock: ManualTime?
    let token: String?
    /// `--token-file` pairs: tokens that see one label only.
    let labelTokens: [(token: String, label: String)]
    /// `--allow-origin` origins.
    let allowedOrigins: [String]
    /// `--max-connections`, and how often refusals past it are logged (10 s when served; an hour
    /// here, so a slow test sees one note for all its refusals).
    let maxConnections: Int
    let limitNoteInterval: TimeInterval
    /// `--connection-timeout-seconds`, `--drain-seconds` and `--statement-timeout-seconds`: a
    /// test that must act inside one of these windows sets it long rather than racing it. The
    /// connection deadline is 600 s here (30 s when served): a test task starved for 30 s on a
    /// loaded machine must not find its idle or half-sent connection cut. The statement deadline
    /// on PostgreSQL is 600 s too (5 s when served): beside a CPU hog and a build, a commit took
    /// longer than 5 s and an ordinary test's input was answered 503.
    let connectionTimeout: Int
    let drainSeconds: TimeInterval
    let statementDeadline: Duration
    /// How long the wall-clock scheduler sleeps at most without looking at the store: a test of
    /// its wake-ups makes it long, so a timer found only by the rescan does not fire at all.
    let rescanInterval: TimeInterval
    /// The longest `waitMs` it accepts (the API's 30 s): a test whose client acts while a long
    /// poll waits makes it long, so a client starved on a loaded machine (a sanitizer build
    /// beside a CPU hog starved one past 30 s) never finds the wait run out first.
    let longestWaitMs: Int
    /// The most bytes a host trace's body may hold (a test of the limit sets a small one).
    let traceLimit: Int
    let fieldValidation: FieldValidation
    /// Rows per transaction when removing or forking.
    let chunkRows: Int
    /// Sees each commit's changed session ids before the server's streams and long polls do
    /// (on the committing thread), with the store: what it writes is there when they look.
    let firstObserver: (@Sendable (SessionStore, [String]) -> Void)?
    private(set) var base: URL
    /// This server's own HTTP client connections, made anew at each restart. Shared by every test,
    /// one pool kept idle connections to ports of servers that had stopped; a later server given
    /// the same port by the kernel had its requests sent on such a dead connection (`Empty reply
    /// from server`, Scripts/flaky's PostgreSQL pass).
    private(set) var session = Client.makeSession()
    let logLines = LockedLines()

    init(retentionMs: Millis? = nil, token: String? = nil, labelTokens: [(token: String, label: String)] = [],
         allowedOrigins: [String] = [], maxConnections: Int = 4000, connectionTimeout: Int = 600, drainSeconds: TimeInterval = 5,
         limitNoteInterval: TimeInterval = 3600, statementDeadline: Duration = .seconds(600),
         rescanInterval: TimeInterval = WallClockScheduler.defaultRescanInterval, longestWaitMs: Int = 30_000,
         traceLimit: Int = 256 << 20, fieldValidation: FieldValidation = .warn,
         clock: ManualTime? = nil, serviceClock: ManualTime? = nil,
         chunkRows: Int = SessionStore.defaultChunkRows, database given: String? = nil,
         firstObserver: (@Sendable (SessionStore, [String]) -> Void)? = nil) throws {
        self.firstObserver = firstObserver
        self.maxConnections = maxConnections
        self.limitNoteInterval = limitNoteInterval
        self.connectionTimeout = connectionTimeout
        self.drainSeconds = drainSeconds
        self.statementDeadline = statementDeadline
        self.rescanInterval = rescanInterval
        self.longestWaitMs = longestWaitMs
        self.traceLimit = traceLimit
        self.fieldValidation = fieldValidation
        self.chunkRows = chunkRows
        self.retentionMs = retentionMs
        self.clock = clock
        self.serviceClock = serviceClock
        self.token = token
        self.labelTokens = labelTokens
        self.allowedOrigins = allowedOrigins
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("todaysim-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        databasePath = directory.appendingPathComponent("sessions.sqlite").path
        // `given`: a database of the test's own (a PostgreSQL server it stops and starts).
        postgres = given == nil && Self.onPostgres ? try TestPostgres.database() : nil
        database = given ?? postgres?.uri ?? databasePath
        base = URL(string: "http://127.0.0.1:1")!
        try start()
    }

    deinit {
        stop()
        session.invalidateAndCancel()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Opens the database and serves it, as `todaysim serve` does.
    func start() throws {
        let log = RequestLog(enabled: true) { [logLines] line in logLines.append(line) }
        let store = try openStore()
        store.health.observe { [logLines] state, cause in logLines.append("storage \(state.rawValue): \(cause)") }
        if let firstObserver { store.observeChanges { [unowned store] ids in firstObserver(store, ids) } }
        let scheduler = WallClockScheduler(store: store, log: { line in log.note(line) }, rescanInterval: rescanInterval)
        let expiry = SessionExpiry(store: store, retentionMs: retentionMs, log: { line in log.note(line) })
        let service = TodayService(store: store, scheduler: scheduler, log: log, heartbeat: 0.3, expiry: expiry,
                                   access: Access(token: token, labelled: labelTokens),
                                   crossOrigin: CrossOrigin(origins: allowedOrigins), longestWaitMs: longestWaitMs,
                                   traceLimit: traceLimit, fieldValidation: fieldValidation, time: serviceClock ?? SystemTime())
        let server = try HTTPServer(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: connectionTimeout,
                                    maxConnections: maxConnections, limitNoteInterval: limitNoteInterval, log: log,
                                    time: clock ?? SystemTime(), sinks: service.judges, bodyHandling: service.bodyHandling,
                                    respond: service.respond)
        scheduler.start()
        scheduler.poke()
        expiry.start()
        self.expiry = expiry
        self.store = store
        let restarted = self.service != nil
        self.server = server
        self.scheduler = scheduler
        self.service = service
        base = URL(string: "http://127.0.0.1:\(server.port)")!
        if restarted {
            session.finishTasksAndInvalidate()
            session = Client.makeSession()
        }
    }

    /// The database, opened as `todaysim serve` opens it. A restart may find its own lock still
    /// held for a moment: a child process another test is spawning holds a copy of every
    /// descriptor of this process (the lock's too) from its fork until its exec closes them, so
    /// a lock held by this very process is tried again until it is free (30 s at most).
    private func openStore() throws -> SessionStore {
        var opened: Result<SessionStore, StoreError>!
        eventuallyOnThisThread(within: 30, pollMs: 10) {
            opened = Result { () throws(StoreError) in
                try SessionStore.open(database, chunkRows: chunkRows, time: clock, statementDeadline: statementDeadline)
            }
            guard case let .failure(.inUse(_, holder)) = opened, holder == getpid() else { return true }
            return false
        }
        return try opened.get()
    }

    /// Stops serving and closes the database.
    func stop() {
        server?.beginStopping()
        service?.stop()
        server?.stop(grace: drainSeconds)
        expiry?.stop()
        expiry = nil
        scheduler?.stop()
        store?.close()
        server = nil
        scheduler = nil
        store = nil
    }

    func restart() throws {
        stop()
        try start()
    }
}

final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

/// A real HTTP client: URLSession against the server's socket.
struct Client: Sendable {
    let server: TestServer

    struct Reply: Sendable {
        var status: Int
        var headers: [String: String]
        var bytes: [UInt8]

        var json: JSON { (try? JSON.parse(bytes: bytes)) ?? .null }
        var text: String { String(decoding: bytes, as: UTF8.self) }
        subscript(key: String) -> JSON? { json[key] }
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// A client session of one server's own (`TestServer.session`): connections are never
    /// carried from one server to another that took its port.
    static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // Generous: under a sanitizer on a loaded machine one request may take many seconds.
        configuration.timeoutIntervalForRequest = 600  // also outlasts the long polls of WaitTests.longWaitMs
        return URLSession(configuration: configuration)
    }

    func send(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: path, relativeTo: server.base)!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await server.session.data(for: request)
        let http = response as! HTTPURLResponse
        var headerMap: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headerMap["\(name)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: headerMap, bytes: Array(data))
    }

    func get(_ path: String) async throws -> Reply { try await send("GET", path) }

    func post(_ path: String, _ body: JSON) async throws -> Reply {
        try await send("POST", path, body: Array(body.serialized().utf8))
    }

    func post(_ path: String, raw: String) async throws -> Reply {
        try await send("POST", path, body: Array(raw.utf8))
    }

    func delete(_ path: String) async throws -> Reply { try await send("DELETE", path) }

    /// H20: the lifecycle input `teardown` closes session `id`, which stays readable.
    @discardableResult
    func tearDown(_ id: String) async throws -> Reply {
        try await post("/v1/sessions/\(id)/lifecycle", ["type": "teardown"])
    }

    /// Creates a session and returns its view.
    @discardableResult
    func create(_ body: JSON) async throws -> JSON {
        let reply = try await post("/v1/sessions", body)
        guard reply.status == 201 else { throw ClientError.unexpected(reply.status, reply.text) }
        return reply.json
    }

    /// Every timeline entry of a session, page by page.
    func timeline(_ id: String) async throws -> [JSON] {
        var entries: [JSON] = []
        var after = 0
        while true {
            let page = try await get("/v1/sessions/\(id)/timeline?after=\(after)&limit=1000")
            guard case let .array(items)? = page["entries"] else { throw ClientError.unexpected(page.status, page.text) }
            entries += items
            after = Int(page["next"]?.int64Value ?? 0)
            if page["more"] != true { return entries }
        }
    }
}

enum ClientError: Error {
    case unexpected(Int, String)
}

/// A problem document (RFC 9457): `type`, `title`, `status`, `detail`, `code` (and `field`).
func expectProblem(_ reply: Client.Reply, _ status: Int, _ code: String, field: String? = nil,
                   sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(reply.status == status, "\(reply.text)", sourceLocation: sourceLocation)
    #expect(reply.header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
    #expect(reply["code"] == .string(code), "\(reply.text)", sourceLocation: sourceLocation)
    #expect(reply["status"] == .int(Int64(status)), sourceLocation: sourceLocation)
    #expect(reply["type"] == .string("/problems/\(code)"), sourceLocation: sourceLocation)
    #expect(reply["title"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(reply["detail"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(reply["field"] == field.map(JSON.string), "\(reply.text)", sourceLocation: sourceLocation)
}


extension Client {
    /// Sends only a request's head on a fresh connection and reads the answer until the server
    /// closes it (60 s at most), as a client that announced a body with `Expect: 100-continue`
    /// waits for the answer before sending it. For what the server decides from the head alone:
    /// a client that sent the body at once could hit the close (EPIPE, then a reset that drops
    /// the answer) whenever the machine is slow enough that the answer comes mid-body. The read
    /// waits on a thread of its own (`offThePool`).
    func answer(toHead head: String) async throws -> Reply {
        try await offThePool { try answerWaiting(toHead: head) }
    }

    private func answerWaiting(toHead head: String) throws -> Reply {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ClientError.unexpected(0, "socket: errno \(errno)") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(server.base.port!).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ClientError.unexpected(0, "connect: errno \(errno)") }
        let bytes = Array(head.utf8)
        guard Glibc.send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw ClientError.unexpected(0, "send: errno \(errno)")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw ClientError.unexpected(0, "no answer: \(text)") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return Reply(status: status, headers: headers, bytes: Array(text[split.upperBound...].utf8))
    }
}

extension Trait where Self == ConditionTrait {
    /// A test of SQLite's own behaviour (its file, its lock, a full disk): skipped on the
    /// PostgreSQL run.
    static var sqliteOnly: Self { .enabled(if: !TestServer.onPostgres, "tests the SQLite file") }
}

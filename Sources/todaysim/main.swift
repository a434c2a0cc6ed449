import Foundation
import TodayHost
import TodayOpenAPI
import TodayServer
import TodayStore

/// `todaysim serve [--host H] [--port P] [--db PATH]`, `migrate`, the client commands, `--help`,
/// `--version` (see `Usage`).
enum CommandLineInterface {
    struct ServeOptions {
        var host = "127.0.0.1"
        var port = 8080
        var database = ProcessInfo.processInfo.environment["TODAYSIM_DB"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ".todaysim/sessions.sqlite"
        var threads = 2
        var traceThreads = TodayService.defaultTraceThreads
        var traceQueueSeconds = TodayService.defaultTraceQueueSeconds
        var connectionTimeout = 30
        var minimumUploadRate = HTTPServer.defaultMinimumUploadRate
        var judgingSeconds = HTTPServer.defaultJudgingAllowance
        var maxConnections = 4000
        var drainSeconds: Double = 5
        var statementTimeoutSeconds: Double = 5
        var quiet = false
        var durability = Durability.normal
        var heartbeat: Double = 15
        var retentionSeconds: Double?
        var token = ProcessInfo.processInfo.environment["TODAYSIM_TOKEN"]
        var tokenFile = ProcessInfo.processInfo.environment["TODAYSIM_TOKEN_FILE"]
        var noAuth = false
        var allowedOrigins: [String] = []
        var fieldValidation = FieldValidation.warn
    }

    static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            fail("no command given", usage: true)
        }
        switch command {
        case "--help", "-h", "help":
            print(Usage.full)
            return 0
        case "--version":
            print("todaysim \(TodaysimVersion.string)\n\(TodaysimVersion.formats)")
            return 0
        case "serve":
            return serve(parse(Array(arguments.dropFirst())))
        case "migrate":
            return MigrateCommand.run(Array(arguments.dropFirst()))
        case "verify-host":
            return VerifyHostCommand.run(Array(arguments.dropFirst()))
        case "compare-traces":
            return CompareTracesCommand.run(Array(arguments.dropFirst()))
        case "timeline":
            return ClientCommands.timeline(Array(arguments.dropFirst()))
        case "report":
            return ClientCommands.report(Array(arguments.dropFirst()))
        default:
            fail("unknown command \(command)", usage: true)
        }
    }

    static func parse(_ arguments: [String]) -> ServeOptions {
        var options = ServeOptions()
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            /// The flag's value: the next argument (an unknown flag is refused as unknown, by
            /// the `switch`'s `default`, before any value is looked for).
            func value() -> String {
                guard let value = rest.popFirst() else { fail("\(flag) needs a value", usage: true) }
                return value
            }
            switch flag {
            case "--quiet": options.quiet = true
            case "--no-auth": options.noAuth = true
            case "--help", "-h":
                print(Usage.full)
                exit(0)
            case "--host": options.host = value()
            case "--port":
                let given = value()
                guard let port = Int(given), (0...65535).contains(port) else { fail("--port must be 0-65535, got \(given)", usage: false) }
                options.port = port
            case "--db": options.database = value()
            case "--synchronous":
                let given = value()
                guard let durability = Durability(rawValue: given.uppercased()) else {
                    fail("--synchronous must be normal or full, got \(given)", usage: false)
                }
                options.durability = durability
            case "--token": options.token = value()
            case "--token-file": options.tokenFile = value()
            case "--allow-origin":
                let given = value()
                guard given == "*" || given.hasPrefix("http://") || given.hasPrefix("https://") else {
                    fail("--allow-origin takes an origin like http://localhost:3000 (or *), got \(given)", usage: false)
                }
                options.allowedOrigins.append(given.hasSuffix("/") ? String(given.dropLast()) : given)
            case "--retention-seconds":
                // Bounded so that seconds × 1000 and every sum with a clock reading stay integers.
                options.retentionSeconds = number(value(), Double.init, in: 0...315_360_000,
                                                  else: "--retention-seconds must be a number from 0 to 315360000 (10 years)")
            case "--heartbeat-seconds":
                options.heartbeat = number(value(), Double.init, in: Double.leastNonzeroMagnitude...3600,
                                           else: "--heartbeat-seconds must be a number above 0 and at most 3600")
            case "--connection-timeout-seconds":
                options.connectionTimeout = number(value(), Int.init, in: 1...3600, else: "--connection-timeout-seconds must be 1-3600")
            case "--min-upload-rate":
                options.minimumUploadRate = number(value(), Int.init, in: 1...(1 << 30),
                                                   else: "--min-upload-rate must be 1-1073741824 (bytes a second)")
            case "--field-validation":
                let given = value()
                guard let mode = FieldValidation(name: given) else {
                    fail("--field-validation must be \(FieldValidation.choices) (in any case)", usage: false)
                }
                options.fieldValidation = mode
            case "--drain-seconds":
                options.drainSeconds = number(value(), Double.init, in: 0...3600, else: "--drain-seconds must be a number from 0 to 3600")
            case "--statement-timeout-seconds":
                options.statementTimeoutSeconds = number(value(), Double.init, in: 0.1...3600,
                                                         else: "--statement-timeout-seconds must be a number from 0.1 to 3600")
            case "--max-connections":
                options.maxConnections = number(value(), Int.init, in: 1...1_000_000, else: "--max-connections must be 1-1000000")
            case "--threads":
                options.threads = number(value(), Int.init, in: 1...64, else: "--threads must be 1-64")
            case "--trace-threads":
                options.traceThreads = number(value(), Int.init, in: 1...64, else: "--trace-threads must be 1-64")
            case "--trace-queue-seconds":
                options.traceQueueSeconds = number(value(), Double.init, in: 0...86_400,
                                                   else: "--trace-queue-seconds must be a number from 0 to 86400")
            case "--trace-judging-seconds":
                options.judgingSeconds = number(value(), Double.init, in: 0...86_400,
                                                else: "--trace-judging-seconds must be a number from 0 to 86400")
            default: fail("unknown flag \(flag)", usage: true)
            }
        }
        return options
    }

    /// A flag's number: `value` read by `read` and within `range`, or the usage error `problem`.
    static func number<T: Comparable>(_ value: String, _ read: (String) -> T?, in range: ClosedRange<T>, else problem: String) -> T {
        guard let number = read(value), range.contains(number) else { fail(problem, usage: false) }
        return number
    }

    /// Loopback addresses: reachable from this machine only.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Each connection is an open file: the soft limit (often 1024) is raised to the hard one,
    /// as far as it goes. Returns the soft limit then in force, `nil` when unknown.
    static func raiseOpenFileLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 65_536)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Files the server keeps open besides connections: the database and its WAL, the
    /// listening socket, epoll and wake-up descriptors, stdio.
    static let otherOpenFiles = 64

    /// `--max-connections`, lowered (with a note) so that it and the room above it for
    /// refusing fit in the open-file limit: past that limit accept() fails and clients hang.
    static func connectionLimit(_ wanted: Int, openFiles: Int?, log: RequestLog) -> Int {
        guard let openFiles else { return wanted }
        // Held at most: the limit plus the room above it; start near the answer, then step down.
        var fitting = min(wanted, max(1, (openFiles - otherOpenFiles) * 16 / 17))
        while fitting > 1, HTTPServer.connectionsHeld(serving: fitting) + otherOpenFiles > openFiles { fitting -= 1 }
        if fitting < wanted {
            log.note("--max-connections lowered from \(wanted) to \(fitting): the open-file limit is \(openFiles)")
        }
        return fitting
    }

    static func serve(_ options: ServeOptions) -> Int32 {
        var labelled: [(token: String, label: String)] = []
        if let path = options.tokenFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read the token file \(path)", usage: false) }
            do throws(TokenFile.Problem) { labelled = try TokenFile.parse(text) } catch {
                fail("the token file \(path): \(error)", usage: false)
            }
        }
        let access = Access(token: options.token, labelled: labelled)
        if !isLoopback(options.host), access == nil, !options.noAuth {
            fail("refusing to serve \(options.host) without a token: pass --token (or TODAYSIM_TOKEN), or --no-auth on a private network", usage: false)
        }
        // SIGINT and SIGTERM are blocked before any thread starts, so every thread inherits the
        // mask: one that arrives at any moment stays pending until `sigwait` below takes it —
        // none is lost, however early. (A Dispatch signal source installs its handler on
        // another thread some time after `resume()`; a `signal(SIG_IGN)` racing with that
        // install discarded SIGTERM in about one round in ten under load — issue 12, item 2.)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        let openFiles = raiseOpenFileLimit()
        // A write past the file size limit (`ulimit -f`) fails with EFBIG, answered 507, instead
        // of killing the process.
        signal(SIGXFSZ, SIG_IGN)
        let log = RequestLog(enabled: !options.quiet)
        let databaseName = SessionStore.isPostgres(options.database) ? PostgresConnection.redacted(options.database) : options.database
        if options.database != ":memory:", !SessionStore.isPostgres(options.database) {
            let folder = URL(fileURLWithPath: options.database).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                fail("cannot create the database folder \(folder.path): \(error.localizedDescription)", usage: false)
            }
        }
        let store: SessionStore
        do {
            store = try SessionStore.open(options.database, durability: options.durability,
                                          statementDeadline: .milliseconds(Int64(options.statementTimeoutSeconds * 1000)))
        } catch {
            fail("cannot open the database \(databaseName): \(error)", usage: false)
        }
        store.health.observe { state, cause in
            log.note(state == .ok ? "storage: \(cause)" : "storage \(state.rawValue): \(cause)")
        }
        let scheduler = WallClockScheduler(store: store, log: { line in log.note(line) })
        let expiry = SessionExpiry(store: store, retentionMs: options.retentionSeconds.map { Millis($0 * 1000) },
                                   log: { line in log.note(line) })
        let service = TodayService(store: store, scheduler: scheduler, log: log, heartbeat: options.heartbeat, expiry: expiry,
                                   access: access, crossOrigin: CrossOrigin(origins: options.allowedOrigins),
                                   fieldValidation: options.fieldValidation, traceThreads: options.traceThreads,
                                   traceQueueSeconds: options.traceQueueSeconds)
        let server: HTTPServer
        do {
            server = try HTTPServer(host: options.host, port: options.port, threads: options.threads,
                                    connectionTimeout: options.connectionTimeout,
                                    maxConnections: connectionLimit(options.maxConnections, openFiles: openFiles, log: log),
                                    minimumUploadRate: options.minimumUploadRate, judgingAllowance: options.judgingSeconds,
                                    log: log, sinks: service.judges,
                                    bodyHandling: service.bodyHandling, respond: service.respond)
        } catch {
            fail("\(error)", usage: false)
        }
        scheduler.start()
        expiry.start()
        // Wall sessions whose timers fell due while the server was down fire at once (C1).
        scheduler.poke()
        log.note("listening on http://\(options.host):\(server.port) (database \(databaseName))")

        var received: Int32 = 0
        while sigwait(&stopSignals, &received) != 0 {}
        log.note("stopping: finishing requests in flight")
        // New requests are refused from here on; then long polls and streams are released, and
        // the server waits for what is still in flight.
        server.beginStopping()
        service.stop()
        server.stop(grace: options.drainSeconds)
        scheduler.stop()
        expiry.stop()
        store.close()
        log.note("stopped")
        return 0
    }

    static func fail(_ message: String, usage showUsage: Bool) -> Never {
        FileHandle.standardError.write(Data("todaysim: \(message)\n".utf8))
        if showUsage { FileHandle.standardError.write(Data((Usage.synopsis + "\n(todaysim --help says more)\n").utf8)) }
        exit(2)
    }
}

exit(CommandLineInterface.main(Array(CommandLine.arguments.dropFirst())))

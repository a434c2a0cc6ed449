/// What `todaysim --help` and `todaysim COMMAND --help` print. The usage block of docs/SERVING.md is
/// this text exactly (`CLIUsageTests` compares them), so both change together.
enum Usage {
    /// The command lines, under `usage: `.
    static let synopsis = """
        usage: todaysim serve [--host 127.0.0.1] [--port 8080] [--db PATH|postgres://…] [--synchronous normal|full]
                              [--retention-seconds S] [--heartbeat-seconds S] [--threads N] [--quiet]
                              [--connection-timeout-seconds 30]  (silence allowed, and the time a
                              whole request may take to arrive)
                              [--min-upload-rate 65536]  (bytes a second a streamed trace body
                              must keep to past that; the time spent judging it is not counted)
                              [--trace-judging-seconds 300]  (judging excused that way beyond
                              what the body's bytes earn; past it judging counts as the
                              client's time, so a trickle is cut however slow the judge)
                              [--trace-threads 1]  (host traces judged at once, each on a thread
                              of its own at a lower priority; more wait their turn)
                              [--trace-queue-seconds 300]  (how much longer than a request may
                              take a trace waits for a judge, then 503)
                              [--max-connections 4000]  (open connections served at once; a
                              request on one past it is answered 503 and closed)
                              [--drain-seconds 5]  (at SIGINT/SIGTERM, how long requests in
                              flight may still take; what is unfinished then is answered 503)
                              [--statement-timeout-seconds 5]  (PostgreSQL: how long one
                              statement may take before the database counts as frozen: 503)
                              [--field-validation warn|strict|ignore]  (unknown fields in
                              control-plane bodies: warned about, refused 400, or dropped;
                              a request's ?fieldValidation= overrides it)
                              [--token T] [--token-file PATH] | [--no-auth]
                              (a token is required to serve beyond loopback; a token file holds
                              `TOKEN LABEL` lines: each token sees only its label's sessions)
                              [--allow-origin ORIGIN]...  (repeatable: pages of these origins may
                              call the API, CORS for the browser bridge /bridge.js; * for any;
                              none by default)
               todaysim migrate --from PATH.sqlite --to postgres://… [--chunk-rows 1000]
        \(verifyHostLine)
        \(compareTracesLine)
        \(clientLines.map { "       " + $0 }.joined(separator: "\n"))
               todaysim --help | --version | COMMAND --help
        """

    /// `--help` and `serve --help`.
    static let full = """
        \(synopsis)

        serve: the todaysim HTTP API. The database defaults to .todaysim/sessions.sqlite (created
        with its folder); --db :memory: keeps everything in memory for one run; a PostgreSQL URI
        (postgres://user@host:port/dbname, any libpq URI) is a database several servers share.
        migrate: copies a SQLite store (not served by a running todaysim) into a PostgreSQL
        database that holds no session: sessions, timelines, request ledgers, violations and
        idempotency keys, in transactions of --chunk-rows rows, shown all at once by the last one
        (a failed copy shows nothing; run it again). Prints one summary line.
        \(verifyHostAbout)
        \(compareTracesAbout)
        \(clientAbout)

        environment:
          TODAYSIM_TOKEN       serve: the token when --token is not given
                               timeline, report: sent as `Authorization: Bearer <token>`
          TODAYSIM_TOKEN_FILE  serve: the token file when --token-file is not given
          TODAYSIM_DB          serve: the database when --db is not given
        \(urlVariable)

        exit codes:
          serve             0 stopped by SIGINT or SIGTERM; 2 a bad flag, or it cannot start (port
                            in use, database unusable, unreachable or served by another todaysim,
                            token file)
          migrate           0 copied; 1 the copy failed partway (nothing of it is shown); 2 a bad
                            flag, or refused before copying (the source missing, in use or not
                            todaysim's; the target unreachable, newer or holding sessions)
        \(verifyHostExitCodes)
        \(compareTracesExitCodes)
        \(clientExitCodes)
        """

    /// `verify-host --help`.
    static let verifyHost = commandHelp(verifyHostCommand, verifyHostAbout, verifyHostExitCodes)

    /// A command's own `--help`: its line, what it does and its exit codes.
    private static func commandHelp(_ command: String, _ about: String, _ exitCodes: String) -> String {
        "usage: \(command)\n\n\(about)\n\nexit codes:\n\(exitCodes)"
    }

    private static let verifyHostCommand = "todaysim verify-host FILE|- [--junit] [--tolerance-ms N]"
    private static let verifyHostLine = "       " + verifyHostCommand

    private static let verifyHostAbout = """
        verify-host: judges a real app's host trace (docs/TRACES.md) against the rules, without a
        server: replays its inputs on a virtual session and prints the verdict as JSON (--junit: as
        JUnit XML). --tolerance-ms replaces the trace's own tolerance (0-10000). - reads stdin.
        """

    private static let verifyHostExitCodes = """
          verify-host       0 the host conforms; 1 the verdict lists divergences; 2 a bad trace (one
                            line: the trace's line and what is wrong) or usage
        """

    /// `compare-traces --help`.
    static let compareTraces = commandHelp(compareTracesCommand, compareTracesAbout, compareTracesExitCodes)

    private static let compareTracesCommand = "todaysim compare-traces A B [--junit] [--tolerance-ms N]"
    private static let compareTracesLine = "       " + compareTracesCommand

    private static let compareTracesAbout = """
        compare-traces: compares two host traces of one scenario (iOS against Android, or two builds;
        docs/TRACES.md): aligns their inputs, binds each side's host ids to the other's, and prints
        every output that differs, with each side's line and time and its rule, beside each trace's
        own verdict, as JSON (--junit: as JUnit XML). --tolerance-ms replaces both traces' own
        (0-10000). - reads one of them from stdin.
        """

    private static let compareTracesExitCodes = """
          compare-traces    0 identical; 1 the comparison lists differences; 2 a bad trace (its side
                            and line), traces whose inputs do not align, or usage
        """

    /// `timeline --help` and `report --help`.
    static let client = """
        usage: \(clientLines.joined(separator: "\n       "))

        \(clientAbout)

        environment:
          TODAYSIM_TOKEN       sent as `Authorization: Bearer <token>`
        \(urlVariable)

        exit codes:
        \(clientExitCodes)
        """

    private static let clientLines = [
        "todaysim timeline ID [--follow] [--after SEQ] [--server URL]",
        "todaysim report ID [--junit] [--server URL]",
    ]

    private static let clientAbout = """
        timeline: prints a session's timeline, one line per entry (--follow: then each new one as it
        comes, until the session is closed). report: prints the session's contract verdict (--junit:
        the JUnit XML form).
        """

    private static let urlVariable = """
          TODAYSIM_URL         timeline, report: the server when --server is not given
                               (default http://127.0.0.1:8080)
        """

    private static let clientExitCodes = """
          timeline, report  0 done (report: the session conforms); 1 the server answered an error,
                            or the report lists violations; 2 usage (a bad flag or server URL);
                            3 the server cannot be reached
        """
}

import Foundation
import TodayHost
import TodayOpenAPI
import TodayWeb
import TodayStore

/// The HTTP API of OpenAPI/todaysim.yaml over a session store: the route table and its handlers.
package final class TodayService: Sendable {
    package let router: Router
    private let log: RequestLog
    private let access: Access?
    private let crossOrigin: CrossOrigin
    private let store: SessionStore
    /// Parked `waitMs` timeline requests.
    package let waiters: TimelineWaiters
    /// Open Server-Sent Events streams.
    package let streams: EventStreams
    /// Long reads (and forks), off the HTTP workers.
    private let reads = ReadPool(threads: 2)
    private let hostTraces: HostTraceHandlers
    /// Where host traces are judged (`HTTPServer(sinks:)`): `traceThreads` at once, the rest wait.
    package let judges: SinkPool
    /// The most bytes a host trace's body may hold (TRACE.md): every other body is at most 1 MiB.
    package static let traceLimit = 256 << 20
    /// The most bytes two traces to compare may hold together: both are held while compared.
    package static let comparisonLimit = 32 << 20
    private let traceComparisons: TraceComparisonHandlers
    /// One judge: on two cores the HTTP workers keep the other (issue 33, item 3).
    package static let defaultTraceThreads = 1
    /// Seconds a host trace may wait for a judge beyond the request deadline (`serve --trace-queue-seconds`).
    package static let defaultTraceQueueSeconds: TimeInterval = 300

    /// `heartbeat`: seconds between the comment lines every event stream gets.
    /// `access`: the tokens required on every endpoint but `/healthz`, `/bridge.js` and CORS
    /// preflights, and the label each may see. `longestWaitMs`: the longest `waitMs` a timeline
    /// request may ask (the API's 30,000; tests whose client acts while a request waits raise it).
    /// `traceLimit`: the most bytes a host trace's body may hold (256 MiB); `comparisonLimit`: two
    /// traces to compare together (32 MiB). `fieldValidation`: how
    /// unknown fields in control-plane bodies are met when a request does not say (`Warn`).
    /// `traceThreads`: how many host traces are judged at once (`serve --trace-threads`);
    /// `traceQueueSeconds`: how much longer than a request may take one waits for a judge.
    /// `time`: the clock the long polls' waits and the streams' heartbeats run on (a test's
    /// `ManualTime`, moved; this machine's otherwise).
    package init(store: SessionStore, scheduler: WallClockScheduler?, log: RequestLog, heartbeat: TimeInterval = 15,
                expiry: SessionExpiry? = nil, access: Access? = nil, crossOrigin: CrossOrigin = CrossOrigin(origins: []),
                longestWaitMs: Int = 30_000, traceLimit: Int = TodayService.traceLimit,
                comparisonLimit: Int = TodayService.comparisonLimit, fieldValidation: FieldValidation = .warn,
                traceThreads: Int = TodayService.defaultTraceThreads,
                traceQueueSeconds: TimeInterval = TodayService.defaultTraceQueueSeconds, time: any TimeSource = SystemTime()) {
        self.log = log
        let waiters = TimelineWaiters(time: time)
        self.waiters = waiters
        let judges = SinkPool(threads: traceThreads, waitAllowance: traceQueueSeconds)
        self.judges = judges
        let hostTraces = HostTraceHandlers(store: store, access: access, crossOrigin: crossOrigin, limit: traceLimit)
        self.hostTraces = hostTraces
        traceComparisons = TraceComparisonHandlers(access: access, crossOrigin: crossOrigin, limit: comparisonLimit)
        self.access = access
        self.crossOrigin = crossOrigin
        self.store = store
        let streams = EventStreams(store: store, heartbeat: heartbeat, time: time)
        self.streams = streams
        store.observeChanges { [waiters] ids in
            waiters.sessionsChanged(ids)
            streams.sessionsChanged(ids)
        }
        // Other servers on the same PostgreSQL (issue 15, item 4): their news of lost writes
        // makes every long poll and stream look again.
        store.observeUnknownChanges { [waiters] in
            waiters.everySessionChanged()
            streams.everySessionChanged()
        }
        log.count(into: store.metrics)
        // Back from a full disk or an unreachable database: the background jobs try at once.
        store.health.observe { [weak scheduler, weak expiry] state, _ in
            guard state == .ok else { return }
            scheduler?.retryNow()
            expiry?.retryNow()
        }
        // Another server armed a wall timer (or its news was lost): the earliest due may be earlier.
        store.observeWallTimerChanges { [weak scheduler] in scheduler?.poke() }
        let fields = FieldChecks(serverMode: fieldValidation)
        var sessions = SessionHandlers(store: store, scheduler: scheduler, waiters: waiters, expiry: expiry, reads: reads, fields: fields)
        sessions.longestWait = longestWaitMs
        let inputs = InputHandlers(store: store, scheduler: scheduler, log: log, fields: fields)
        let reports = ReportHandlers(store: store)
        let batches = StepsHandler(store: store, scheduler: scheduler, log: log, fields: fields)
        let scripts = ScriptHandlers(store: store, scheduler: scheduler, fields: fields)
        let events = EventHandlers(store: store, streams: streams)
        var router = Router()
        router.add("GET", "/") { _, _ in HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: WebAssets.dashboardPage) }
        // Liveness: the process serves (an orchestrator restarts on it). Readiness: the storage
        // takes writes (a restart would not bring a full disk back, so it is a separate probe).
        router.add("GET", "/healthz") { _, _ in .json(["status": "ok"]) }
        router.add("GET", "/readyz") { [store] _, _ in
            store.probeStorage()
            let (state, _) = store.health.snapshot
            let ready = state == .ok
            return HTTPResponse(status: ready ? 200 : 503, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")]
                                    + (ready ? [] : [("Retry-After", "5")]),
                                body: Array(#"{"status":"\#(ready ? "ok" : "degraded")","storage":"\#(state.rawValue)"}"#.utf8))
        }
        router.add("GET", "/metrics") { [store] _, _ throws(APIError) in
            let counts: (active: Int, closed: Int)
            do throws(StoreError) { counts = try store.sessionCounts() } catch { throw APIError(error) }
            let judging = judges.counts
            let text = store.metrics.render(gauges: [
                ("todaysim_sessions", "Sessions stored, by status.",
                 [("status=\"active\"", Double(counts.active)), ("status=\"closed\"", Double(counts.closed))]),
                ("todaysim_trace_judgements", "Host-trace uploads being judged, and waiting for a judge (--trace-threads).",
                 [("state=\"judging\"", Double(judging.taking)), ("state=\"waiting\"", Double(judging.waiting))]),
            ])
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                body: Array(text.utf8))
        }
        router.add("GET", "/bridge.js") { _, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "no-cache")],
                         body: WebAssets.bridgeScript)
        }
        // The rules as this build has them: a page (its links are /rules#h13) and the Markdown.
        router.add("GET", "/rules") { _, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: WebAssets.rulesPage)
        }
        router.add("GET", "/rules.md") { _, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/markdown; charset=utf-8")], body: WebAssets.rulesMarkdown)
        }
        router.add("GET", "/openapi.yaml") { _, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: OpenAPIDocument.bytes)
        }
        router.add("POST", "/v1/sessions", sessions.create)
        router.add("GET", "/v1/sessions", reads.offWorker("/v1/sessions", sessions.list, log: log))
        router.add("DELETE", "/v1/sessions", sessions.deleteLabelled)
        router.add("POST", "/v1/reset", sessions.reset)
        router.add("GET", "/v1/sessions/{id}", sessions.read)
        router.add("DELETE", "/v1/sessions/{id}", sessions.purge)
        router.add("POST", "/v1/sessions/{id}/gestures", inputs.feed(.gesture, Decoded.http(InputDecoding.gesture)))
        router.add("POST", "/v1/sessions/{id}/lifecycle", inputs.feed(.lifecycle, Decoded.http(InputDecoding.lifecycle)))
        router.add("POST", "/v1/sessions/{id}/web-events", inputs.feed(nil, Decoded.http(InputDecoding.webEvent)))
        router.add("POST", "/v1/sessions/{id}/commands", inputs.feed(.command, Decoded.http(InputDecoding.command)))
        router.add("POST", "/v1/sessions/{id}/clock", inputs.feed(.clock, Decoded.http(InputDecoding.clock)))
        router.add("POST", "/v1/sessions/{id}/steps", reads.offWorker("/v1/sessions/{id}/steps", batches.steps, log: log))
        router.add("GET", "/v1/sessions/{id}/timeline", reads.offWorker("/v1/sessions/{id}/timeline", sessions.timeline, log: log))
        router.add("GET", "/v1/sessions/{id}/watchdogs", sessions.watchdogs)
        router.add("GET", "/v1/sessions/{id}/events", events.session)
        router.add("GET", "/v1/events", events.account)
        router.add("GET", "/v1/sessions/{id}/export", reads.offWorker("/v1/sessions/{id}/export", scripts.export, log: log))
        router.add("POST", "/v1/sessions/{id}/fork", reads.offWorker("/v1/sessions/{id}/fork", scripts.fork, log: log))
        router.add("GET", "/v1/sessions/{id}/report", reads.offWorker("/v1/sessions/{id}/report", reports.report, log: log))
        router.add("GET", "/v1/sessions/{id}/report/junit", reads.offWorker("/v1/sessions/{id}/report/junit", reports.junit, log: log))
        router.add("GET", "/v1/violations", reads.offWorker("/v1/violations", reports.violations, log: log))
        router.add("POST", HostTraceHandlers.path, hostTraces.answerWhole)
        router.add("POST", TraceComparisonHandlers.path, traceComparisons.answerWhole)
        self.router = router
    }

    /// How the HTTP server reads a request's body (`HTTPServer(bodyHandling:)`): a host trace
    /// as it arrives and two traces to compare on a judge, every other body whole.
    package func bodyHandling(_ request: HTTPRequest) -> BodyHandling {
        let handling = hostTraces.bodyHandling(request)
        guard case .whole = handling else { return handling }
        return traceComparisons.bodyHandling(request)
    }

    /// Answers every parked request now; call before stopping the HTTP server.
    package func stop() {
        waiters.stop()
        streams.stop()
        reads.stop()
    }

    /// A session outside the request's label is `404`, exactly as if it did not exist.
    private func confine(_ scope: Access.Scope, sessionId: String?) throws(APIError) {
        guard case let .label(label) = scope, let sessionId else { return }
        let stored: StoredSession
        do throws(StoreError) { stored = try store.session(sessionId) } catch { throw APIError(error) }
        guard stored.session.config.label == label else { throw .sessionNotFound(sessionId) }
    }

    /// Routes one request; every failure becomes a problem document.
    package func respond(_ request: HTTPRequest) -> (HTTPResponse, routeName: String) {
        let origin = request.header("Origin")
        if request.method == "OPTIONS" {
            guard case let .methodNotAllowed(methods) = router.match(method: "OPTIONS", path: request.path) else {
                return (APIError.notFound(request.path, meant: router.nearest(to: request.path)).response, "-")
            }
            return (crossOrigin.preflight(origin: origin, methods: methods), "OPTIONS")
        }
        let (response, route) = route(request)
        return (response.adding(crossOrigin.headers(for: origin)), route)
    }

    private func route(_ incoming: HTTPRequest) -> (HTTPResponse, routeName: String) {
        let request: HTTPRequest
        switch Access.scoped(incoming, by: access) {
        case let .failure(refusal): return (refusal.response, "-")
        case let .success(scoped): request = scoped
        }
        switch router.match(method: request.method, path: request.path) {
        case .notFound:
            return (APIError.notFound(request.path, meant: router.nearest(to: request.path)).response, "-")
        case let .methodNotAllowed(allowed):
            return (APIError.methodNotAllowed(request.method, allowed: allowed).response, "-")
        case let .found(route, parameters):
            // A host trace's body has types of its own (NDJSON, multipart), which its handler checks.
            if !request.body.isEmpty, route.template != HostTraceHandlers.path, route.template != TraceComparisonHandlers.path,
               let refusal = BodyMediaType.refusal(contentType: request.header("Content-Type")) {
                return (refusal.response, route.template)
            }
            do {
                try confine(request.scope, sessionId: parameters.values["id"])
                return (try route.handler(request, parameters), route.template)
            } catch {
                if error.code == "internal" {
                    log.note("\(request.method) \(route.template): \(error.logDetail ?? "unexpected failure")")
                }
                return (error.response, route.template)
            }
        }
    }
}

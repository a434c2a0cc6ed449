import TodayHost
import TodayStore

/// `POST /v1/host-traces` (docs/TRACES.md): a real host's trace judged as its body arrives, a
/// chunk at a time, by the engine `todaysim verify-host` runs. Nothing of the trace is held but
/// the line being read; with `?keep=ID` the replay's entries go to the store as they are made
/// (`SessionStore.KeptReplay`) and the session appears at the end. A bad line ends the judging:
/// the rest of the body is read and dropped, and the answer is `400 invalid_trace` naming the
/// line, with nothing stored.
final class HostTraceUpload: BodySink, @unchecked Sendable {
    struct Options {
        var toleranceMs: Millis?
        var keep: String?
        var label: String?
        var junit = false
    }

    let limit: Int
    private let store: SessionStore
    private let options: Options
    private let extraHeaders: [(String, String)]
    /// `curl --data-binary` sends `application/x-www-form-urlencoded` unless told otherwise;
    /// `curl -d` also strips the newlines, which a bad first line then says.
    private let sentAsForm: Bool
    private var lines: TraceLines
    private var verifier: HostTraceVerifier
    private var kept: SessionStore.KeptReplay?
    /// The first thing that ended the judging: the rest of the body is dropped.
    private var failure: APIError?

    init(store: SessionStore, options: Options, format: TraceLines.Format, sentAsForm: Bool,
         limit: Int, extraHeaders: [(String, String)]) {
        self.store = store
        self.options = options
        self.limit = limit
        self.sentAsForm = sentAsForm
        self.extraHeaders = extraHeaders
        lines = TraceLines(format)
        verifier = HostTraceVerifier(sessionId: options.keep ?? "replay", keepingTimeline: options.keep != nil,
                                     toleranceMs: options.toleranceMs, label: options.label)
    }

    /// What the query asks, checked before the body is read (`400` names the parameter).
    static func options(_ request: HTTPRequest) throws(APIError) -> Options {
        let query = QueryParameters(request: request)
        var options = Options()
        if let text = request.query("toleranceMs") {
            guard let ms = Millis(text), (0...TraceHeader.largestToleranceMs).contains(ms) else {
                throw .invalidField("toleranceMs", "must be an integer from 0 to \(TraceHeader.largestToleranceMs)")
            }
            options.toleranceMs = ms
        }
        if let keep = request.query("keep") {
            guard HostSession.isValidId(keep) else { throw .invalidField("keep", HostSession.idRule) }
            options.keep = keep
        }
        options.label = try query.identifier("label")
        if options.label != nil, options.keep == nil { throw .invalidField("label", "labels a kept replay: give keep too") }
        if let bound = request.scope.label {
            // A label-bound token keeps replays in its own label only.
            guard options.label == nil || options.label == bound else {
                throw .invalidField("label", "this token keeps replays labelled \(bound) only")
            }
            if options.keep != nil { options.label = bound }
        }
        options.junit = try query.oneOf("format", ["json", "junit"]) == "junit"
        return options
    }

    // MARK: BodySink

    func take(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard failure == nil else { return }
        do throws(TraceProblem) {
            try lines.feed(bytes) { line throws(TraceProblem) in try verifier.feed(line: line) }
        } catch {
            fail(error)
            return
        }
        keepWhatIsMade()
    }

    func finish() -> HTTPResponse {
        if failure == nil {
            do throws(TraceProblem) {
                try lines.finish { line throws(TraceProblem) in try verifier.feed(line: line) }
                var verdict = try verifier.finish()
                keepWhatIsMade()
                if let kept, failure == nil, let session = verifier.session {
                    do throws(StoreError) {
                        verdict.session = try kept.finish(session, ledger: verifier.ledger).id
                    } catch {
                        failure = APIError(error)
                    }
                }
                if failure == nil { return answer(verdict) }
            } catch {
                fail(error)
            }
        }
        kept?.abandon()
        var response = (failure ?? .internalError).response
        response.headers += extraHeaders
        return response
    }

    func abandon() {
        kept?.abandon()
    }

    // MARK: Judging

    /// With `keep`: starts the kept session once the replay exists, and stores what it made.
    private func keepWhatIsMade() {
        guard failure == nil, let id = options.keep, let session = verifier.session else { return }
        do throws(StoreError) {
            if kept == nil { kept = try store.keepReplay(session, as: id) }
            try kept?.append(verifier.takeTimeline())
        } catch {
            failure = APIError(error)
        }
    }

    private func fail(_ problem: TraceProblem) {
        let hint = problem.line == 1 && sentAsForm
            ? " (sent as a form: if curl -d stripped the newlines, send the trace with --data-binary @FILE)" : ""
        failure = .invalidTrace(problem, hint: hint)
        kept?.abandon()
        kept = nil
    }

    private func answer(_ verdict: Verdict) -> HTTPResponse {
        var response: HTTPResponse = options.junit ? .junit(verdict.junit) : .json(verdict.json)
        response.headers += extraHeaders
        return response
    }
}

/// The route `POST /v1/host-traces`: its body is read as it arrives (`HTTPServer(bodyHandling:)`),
/// so what a request's head says (token, query, `Content-Type`, a kept id already taken) is
/// answered before the body is read.
struct HostTraceHandlers: StreamedRoute {
    static let path = "/v1/host-traces"
    let store: SessionStore
    let access: Access?
    let crossOrigin: CrossOrigin
    /// The most a trace's body may hold (`TodayService.traceLimit`; tests set less).
    let limit: Int

    func upload(_ request: HTTPRequest, extraHeaders: [(String, String)]) throws(APIError) -> any BodySink {
        let format: TraceLines.Format
        var sentAsForm = false
        switch request.header("Content-Type").map(BodyMediaType.mediaType) {
        case nil, "application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines", "text/plain":
            format = .ndjson
        case "application/x-www-form-urlencoded":
            format = .ndjson
            sentAsForm = true
        case let json? where json == "application/json" || json.hasSuffix("+json"):
            format = .jsonArray
        case let other?:
            throw .unsupportedMediaType("a host trace is NDJSON (application/x-ndjson, one line per line) or a JSON array of its lines (application/json); got Content-Type \(other.isEmpty ? "(empty)" : other)")
        }
        if let contentType = request.header("Content-Type"), let refusal = BodyMediaType.charsetRefusal(contentType) { throw refusal }
        let options = try HostTraceUpload.options(request)
        if let keep = options.keep {
            let taken: Bool
            do throws(StoreError) { taken = try store.exists(keep) } catch { throw APIError(error) }
            if taken { throw .sessionExists(keep) }
        }
        return HostTraceUpload(store: store, options: options, format: format, sentAsForm: sentAsForm,
                               limit: limit, extraHeaders: extraHeaders)
    }
}

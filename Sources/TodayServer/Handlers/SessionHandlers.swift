import Foundation
import TodayHost
import TodayOpenAPI
import TodayStore

/// Creating, listing, reading and tearing down sessions.
struct SessionHandlers: Sendable {
    let store: SessionStore
    let scheduler: WallClockScheduler?
    let waiters: TimelineWaiters
    let expiry: SessionExpiry?
    /// Where a read the cache cannot answer goes on shared storage (not the HTTP worker).
    let reads: ReadPool
    let fields: FieldChecks
    /// The longest `waitMs` a timeline request may ask (30 s, the API's limit): tests whose
    /// client must act while a request waits raise it, so a client starved on a loaded machine
    /// never finds the wait run out first.
    var longestWait = Self.longestWaitMs
    static let longestWaitMs = 30_000

    func create(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        let body = try Decoded.body(request.body)
        var (id, config, ttlMs) = try Decoded.http(InputDecoding.creation)(body)
        let warnings = try fields.check(request, body.object, as: .creation)
        if let label = request.scope.label {
            // A label-bound token creates sessions of its own label only.
            guard config.label == nil || config.label == label else {
                throw .invalidField("label", "this token creates sessions labelled \(label) only")
            }
            config.label = label
        }
        let write: SessionStore.Write
        do throws(StoreError) {
            write = try store.create(id: id, config: config, ttlMs: ttlMs)
        } catch {
            throw APIError(error)
        }
        if write.stored.isWall { scheduler?.poke() }
        if ttlMs != nil { expiry?.poke() }
        var response = HTTPResponse.jsonBytes(write.viewBytes, status: 201)
        response.headers.append(("Location", "/v1/sessions/\(write.stored.id)"))
        return warnings.adding(to: response)
    }

    func list(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        let query = QueryParameters(request: request)
        let status = try query.oneOf("status", ["active", "closed"])
        let uid = try query.identifier("uid")
        let label = try query.identifier("label")
        let limit = try query.limit()
        let after = try query.listCursor()
        if let label, !request.scope.sees(label: label) {
            return .json(["sessions": .array([]), "next": .null])
        }
        let page: SessionStore.SessionPage
        do {
            page = try store.list(uid: uid, label: label ?? request.scope.label, closed: status.map { $0 == "closed" }, limit: limit,
                                  after: after)
        } catch {
            throw APIError(error)
        }
        return .json(["sessions": .array(page.sessions.map(\.session.view)), "next": .string(page.next)])
    }

    func read(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        let id = path["id"], ifNoneMatch = request.header("If-None-Match")
        @Sendable func readNow() -> HTTPResponse {
            do throws(StoreError) {
                let view = try store.taggedView(id)
                return Conditional.respond(ifNoneMatch: ifNoneMatch, tag: view.tag, body: view.bytes)
            } catch {
                return APIError(error).response
            }
        }
        guard store.isShared else { return readNow() }
        // Shared storage: a cached view is confirmed by a version check other reads share, and
        // the worker goes on serving meanwhile (the connection is parked until the answer).
        return .later { [store, reads] finish in
            _ = store.cachedTaggedView(id) { result in
                switch result {
                case let .success(view?):
                    finish { Conditional.respond(ifNoneMatch: ifNoneMatch, tag: view.tag, body: view.bytes) }
                case .success(nil):
                    reads.submit {
                        let made = MadeResponse(response: readNow())
                        finish { made.response }
                    }
                case let .failure(error):
                    finish { APIError(error).response }
                }
            }
        }
    }

    /// `DELETE /v1/sessions?label=…`: ends and purges one test run's sessions.
    func deleteLabelled(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        guard let label = try QueryParameters(request: request).identifier("label") else {
            throw .invalidField("label", "is required: DELETE /v1/sessions purges the sessions of one label")
        }
        guard request.scope.sees(label: label) else { return .json(["deleted": 0]) }
        do throws(StoreError) {
            return .json(["deleted": .int(try store.purge(label: label))])
        } catch {
            throw APIError(error)
        }
    }

    /// `POST /v1/reset`: purges every session (for local use); a label-bound token's reset
    /// purges its own label's sessions.
    func reset(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        do throws(StoreError) {
            return .json(["deleted": .int(try store.purge(label: request.scope.label))])
        } catch {
            throw APIError(error)
        }
    }

    func watchdogs(_: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        .json(["watchdogs": .array(try stored(path["id"]).session.watchdogs.map(\.json))])
    }

    func timeline(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        let session = try stored(path["id"]).session
        let query = QueryParameters(request: request)
        let kind = try query.oneOf("kind", TimelineEntry.Kind.allCases.map(\.rawValue))
        let after = try query.afterSeq()
        let limit = try query.limit()
        let waitMs = try query.waitMs(longest: longestWait)
        // Every parameter is checked whatever the format; a trace is the whole timeline.
        if try query.oneOf("format", ["json", "trace"]) == "trace" { return try trace(of: session) }
        // HEAD answers the page as it is now: a health check must not wait on a long poll.
        let deadline = waiters.time.now.addingTimeInterval(request.method == "HEAD" ? 0 : Double(waitMs) / 1000)
        return try timelinePage(ifNoneMatch: request.header("If-None-Match"), id: path["id"], after: after, limit: limit,
                                kind: kind, until: deadline)
    }

    /// `?format=trace`: the whole timeline as a host trace (docs/TRACES.md), every output kind
    /// recorded and `endMs` the session's clock: what a conforming host records for the same
    /// inputs, a golden trace.
    private func trace(of session: HostSession) throws(APIError) -> HTTPResponse {
        let header: JSON = ["todaysimTrace": 1, "recorded": .strings(TraceKind.allCases.map(\.rawValue)), "endMs": .int(session.nowMs),
                            "host": .string("todaysim \(TodaysimVersion.string), session \(session.id)")]
        var bytes: [UInt8] = []
        header.write(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        var after = 0
        while true {
            let page: SessionStore.TimelinePage
            do throws(StoreError) { page = try store.timeline(session.id, after: after, limit: 1000, kind: nil) } catch { throw APIError(error) }
            for entry in page.entries {
                bytes += entry
                bytes.append(UInt8(ascii: "\n"))
            }
            guard page.more else { break }
            after = page.next
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/x-ndjson")], body: bytes)
    }

    /// The page now; or, while it is empty and the wait has time left, a parked request that
    /// looks again whenever the session's timeline grows. A look again is of the session it
    /// parked on (its row, `ord`): purged, it is `404` even when the id was created again since.
    private func timelinePage(ifNoneMatch: String?, id: String, after: Int, limit: Int, kind: String?,
                              until deadline: Date, ord: Int64? = nil) throws(APIError) -> HTTPResponse {
        let page: SessionStore.TimelinePage
        let mark = waiters.mark()
        do throws(StoreError) {
            page = try store.timeline(id, after: after, limit: limit, kind: kind)
            if let ord, page.ord != ord { throw StoreError.sessionNotFound(id) }
        } catch {
            throw APIError(error)
        }
        guard page.entries.isEmpty, !waiters.time.hasReached(deadline), !waiters.isClosed else {
            return Conditional.respond(ifNoneMatch: ifNoneMatch, tag: "t\(page.lastSeq)", body: Responses.timelineBytes(page))
        }
        let handlers = self
        return .later { [waiters] finish in
            waiters.park(sessionId: id, since: mark, deadline: deadline) {
                finish {
                    do throws(APIError) {
                        return try handlers.timelinePage(ifNoneMatch: ifNoneMatch, id: id, after: after, limit: limit,
                                                         kind: kind, until: deadline, ord: page.ord)
                    } catch {
                        return error.response
                    }
                }
            }
        }
    }

    /// `DELETE /v1/sessions/{id}`: the session and everything recorded for it go, as
    /// `DELETE ?label=` does for many (an active one is not torn down first); afterwards every
    /// route of it is `404`, and its streams and long polls end. Teardown (H20), which keeps a
    /// session readable, is the lifecycle input. A label-bound token's purge checks the label
    /// again in the purge's own transaction: the id may have been purged and created under
    /// another label since the route was confined to the token's label.
    func purge(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        do throws(StoreError) {
            guard try store.purge(id: path["id"], label: request.scope.label) else {
                throw StoreError.sessionNotFound(path["id"])
            }
            return HTTPResponse(status: 204)
        } catch {
            throw APIError(error)
        }
    }

    private func stored(_ id: String) throws(APIError) -> StoredSession {
        do { return try store.session(id) } catch { throw APIError(error) }
    }
}

/// Everything that feeds a session: gestures, lifecycle, Web events, commands, the clock.
struct InputHandlers: Sendable {
    let store: SessionStore
    let scheduler: WallClockScheduler?
    let log: RequestLog
    let fields: FieldChecks

    /// A handler that decodes its body with `decode` and applies the input; a body of `kind`
    /// has its unknown fields warned about (a bridge message, `nil`, keeps H21: ignored). The
    /// body and `If-Match` are each parsed once, here, and the values passed on.
    func feed(_ kind: ControlBody?, _ decode: @escaping @Sendable (BodyFields) throws(APIError) -> Input) -> Router.Handler {
        { [self] (request: HTTPRequest, path: PathParameters) throws(APIError) -> HTTPResponse in
            let id = path["id"]
            let expectedVersion = try Conditional.expectedVersion(request)  // a malformed If-Match is refused before the body
            let body: BodyFields, input: Input
            do throws(APIError) {
                body = try Decoded.body(request.body)
                input = try decode(body)
            } catch {
                // A missing or closed session is the more useful answer than a bad body.
                let stored: StoredSession
                do throws(StoreError) { stored = try store.session(id) } catch { throw APIError(error) }
                if stored.session.isClosed { throw .sessionClosed }
                throw error
            }
            let warnings = if let kind { try fields.check(request, body.object, as: kind) } else { FieldWarnings(mode: try fields.mode(request)) }
            return try Submission(store: store, scheduler: scheduler, log: log).submit([.input(input)], to: id, ifVersion: expectedVersion,
                                                                                      for: request, warnings: warnings, answer: .input)
        }
    }
}

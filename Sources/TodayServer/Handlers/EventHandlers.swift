import TodayHost
import TodayStore

/// Server-Sent Events: one event per timeline entry (`id:` seq, `event:` kind, `data:` entry).
struct EventHandlers: Sendable {
    let store: SessionStore
    let streams: EventStreams

    static let headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]

    /// `GET /v1/sessions/{id}/events`, resuming after `Last-Event-ID` (or `?after=`).
    func session(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        let id = path["id"]
        let ord: Int64
        do throws(StoreError) { ord = try store.session(id).ord } catch { throw APIError(error) }
        var after = try QueryParameters(request: request).afterSeq()
        if let seq = try QueryParameters.cursor(request.header("Last-Event-ID"), field: "Last-Event-ID",
                                                problem: "must be a seq this stream sent") {
            after = seq
        }
        return Self.streaming(request) { streams.follow(session: id, ord: ord, after: after) }
    }

    /// `GET /v1/events?uid=`: every session of one account, from now on (`id:` is `session/seq`).
    func account(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        guard let uid = try QueryParameters(request: request).identifier("uid") else { throw .invalidField("uid", "is required") }
        var current: [(id: String, ord: Int64, lastSeq: Int)] = []
        var cursor: String?
        repeat {
            let page: SessionStore.SessionPage
            do throws(StoreError) { page = try store.list(uid: uid, label: request.scope.label, closed: nil, limit: 1000, after: cursor) } catch { throw APIError(error) }
            current += page.sessions.map { ($0.id, $0.ord, $0.session.lastSeq) }
            cursor = page.next
        } while cursor != nil
        return Self.streaming(request) { streams.follow(uid: uid, label: request.scope.label, currentSessions: current) }
    }

    /// The stream `follow` opens; for `HEAD`, a stream that ends at once: the same status and
    /// headers, no body, and nothing left waiting for entries that a HEAD would never read.
    private static func streaming(_ request: HTTPRequest, _ follow: () -> EventStream) -> HTTPResponse {
        var response = HTTPResponse(status: 200, headers: headers)
        if request.method == "HEAD" {
            let ended = EventStream()
            ended.close()
            response.stream = ended
        } else {
            response.stream = follow()
        }
        return response
    }
}

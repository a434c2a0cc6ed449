import TodayHost
import TodayStore

/// What scripts use to reproduce and branch scenarios: export and fork.
struct ScriptHandlers: Sendable {
    let store: SessionStore
    let scheduler: WallClockScheduler?
    let fields: FieldChecks

    /// `GET …/export?after=&limit=`: `{"create": body, "steps": [...], "closed", "next", "more"}`
    /// — `POST /v1/sessions` with `create`, then `POST …/steps` with each page's `steps` in turn,
    /// rebuilds the same session (same ids, same timeline) on a `virtual` clock; `closed` is true
    /// on the page whose steps end with the teardown (`{"lifecycle":{"type":"teardown"}}`), so
    /// replaying that page closes the copy too: nothing is left to send. A page holds at most
    /// `limit` (default and most: 1000, one `/steps` batch) steps, so a long session's export
    /// is never one unbounded answer; each page is its own transaction when replayed.
    func export(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        let query = QueryParameters(request: request)
        let after = try query.afterSeq()
        let limit = try query.limit(default: StepsHandler.maximumSteps)
        let first: SessionStore.TimelinePage
        let page: SessionStore.TimelinePage
        do throws(StoreError) {
            first = try store.timeline(path["id"], after: 0, limit: 1, kind: "input")
            page = try store.timeline(path["id"], after: after, limit: limit, kind: "input")
        } catch {
            throw APIError(error)
        }
        var create: JSON = .null
        var steps: [JSON] = []
        var closed = false
        // Every page carries `create` (the first input); on the first page it is read twice.
        for bytes in first.entries + page.entries {
            guard let entry = try? JSON.parse(bytes: bytes), let input = entry["data"]?["input"] else {
                throw APIError.internalError
            }
            let via = entry["data"]?["via"]?.stringValue ?? Input.channel(ofType: entry["type"]?.stringValue ?? "")
            switch via {
            case "create":
                guard case let .object(members) = input else { throw APIError.internalError }
                // Absent rather than null, so the body is one the create endpoint's schema accepts as is.
                create = .object([("id", .string(path["id"]))] + members.filter { !$0.1.isNull })
            default:
                // Entries from before teardown became a lifecycle input say `via: teardown`.
                let channel = via == "teardown" ? "lifecycle" : via
                if channel == "lifecycle", input["type"]?.stringValue == "teardown" { closed = true }
                steps.append(.object([(channel, input)]))
            }
        }
        return .json(["create": create, "steps": .array(steps), "closed": .bool(closed),
                      "next": .int(Int64(page.next)), "more": .bool(page.more)])
    }

    /// `POST …/fork {id?}`: `201` and the copy's view.
    func fork(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        var newId: String?
        var warnings = FieldWarnings(mode: try fields.mode(request))
        if !request.body.isEmpty {
            let body = try Decoded.body(request.body)
            do throws(InputProblem) {
                newId = try body.string("id")
            } catch {
                throw APIError(error)
            }
            if let newId, !HostSession.isValidId(newId) {
                throw .invalidField("id", HostSession.idRule)
            }
            warnings = try fields.check(request, body.object, as: .fork)
        }
        do throws(StoreError) {
            let copy = try store.fork(path["id"], as: newId)
            if copy.isWall { scheduler?.poke() }
            var response = HTTPResponse.jsonBytes(copy.viewBytes, status: 201)
            response.headers.append(("Location", "/v1/sessions/\(copy.id)"))
            return warnings.adding(to: response)
        } catch {
            throw APIError(error)
        }
    }
}

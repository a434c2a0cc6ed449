import TodayHost
import TodayStore

/// Hands inputs to the writer and answers when their transaction committed — the one path
/// for single inputs and batches, with or without an `Idempotency-Key`. The HTTP connection is
/// parked meanwhile; no thread waits.
struct Submission: Sendable {
    let store: SessionStore
    let scheduler: WallClockScheduler?
    let log: RequestLog

    /// `render` makes the `200` body from what the steps wrote; `warnings` are added to it
    /// (and stored with it under an `Idempotency-Key`, so a replay carries them again).
    func submit(_ steps: [SessionStore.Step], to id: String, for request: HTTPRequest, warnings: FieldWarnings,
                render: @escaping @Sendable ([SessionStore.Write]) -> [UInt8]) throws(APIError) -> HTTPResponse {
        let render: @Sendable ([SessionStore.Write]) -> [UInt8] = { writes in warnings.adding(to: render(writes)) }
        let expectedVersion = try Conditional.expectedVersion(request)
        let pokeIfWall: @Sendable ([SessionStore.Write]) -> Void = { [scheduler] writes in
            if writes.last?.stored.isWall == true { scheduler?.poke() }
        }
        if let keyed = try IdempotencyKeys.key(request, mode: warnings.mode, render: render) {
            return .later { [store, log] finish in
                store.applyAll(steps, to: id, ifVersion: expectedVersion, idempotency: keyed) { result in
                    if case let .success(.applied(writes, _)) = result { pokeIfWall(writes) }
                    finish {
                        var response = IdempotencyKeys.respond(result, log: log)
                        if response.status < 300 { response.headers += warnings.headers }
                        return response
                    }
                }
            }
        }
        return .later { [store, log] finish in
            store.applyAll(steps, to: id, ifVersion: expectedVersion) { result in
                finish {
                    switch result {
                    case let .success(writes):
                        pokeIfWall(writes)
                        var response = HTTPResponse.jsonBytes(render(writes))
                        response.headers += warnings.headers
                        return response
                    case let .failure(error):
                        let problem = APIError(error)
                        if let detail = problem.logDetail { log.note("input to a session: \(detail)") }
                        return problem.response
                    }
                }
            }
        }
    }
}

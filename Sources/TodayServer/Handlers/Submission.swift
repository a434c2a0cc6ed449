import TodayHost
import TodayStore

/// Hands inputs to the writer and answers when their transaction committed — the one path
/// for single inputs and batches, with or without an `Idempotency-Key`. The HTTP connection is
/// parked meanwhile; no thread waits.
struct Submission: Sendable {
    let store: SessionStore
    let scheduler: WallClockScheduler?
    let log: RequestLog

    /// `answer` is the `200` body's shape (`WriteAnswer`, made from what the steps wrote);
    /// `warnings` are added to it (and stored with it under an `Idempotency-Key`, so a replay
    /// carries them again). `expectedVersion`: the request's `If-Match`, as its handler parsed it.
    func submit(_ steps: [SessionStore.Step], to id: String, ifVersion expectedVersion: Int?, for request: HTTPRequest,
                warnings: FieldWarnings, answer: WriteAnswer, asBatch: Bool = false) throws(APIError) -> HTTPResponse {
        let pokeIfWall: @Sendable ([SessionStore.Write]) -> Void = { [scheduler] writes in
            if writes.last?.stored.isWall == true { scheduler?.poke() }
        }
        let keyed = try IdempotencyKeys.key(request, mode: warnings.mode, answer: answer, warnings: warnings.listed)
        return .later { [store, log] finish in
            store.apply(steps: steps, to: id, ifVersion: expectedVersion, idempotency: keyed, asBatch: asBatch) { result in
                if case let .success(.applied(writes, _)) = result { pokeIfWall(writes) }
                finish {
                    var response: HTTPResponse
                    switch result {
                    case let .success(.applied(_, answer?)):
                        // Under a key the answer was made in the transaction and stored there.
                        response = .jsonBytes(answer)
                    case let .success(.applied(writes, nil)):
                        response = .jsonBytes(answer.bytes(of: writes, warnings: warnings.listed))
                    case let .success(.replayed(answer)):
                        response = .jsonBytes(answer)
                        response.headers.append(("Idempotent-Replayed", "true"))
                    case let .failure(error):
                        let problem = APIError(error)
                        if let detail = problem.logDetail { log.note("\(keyed == nil ? "input to a session" : "keyed input"): \(detail)") }
                        return problem.response
                    }
                    if response.status < 300 { response.headers += warnings.headers }
                    return response
                }
            }
        }
    }
}

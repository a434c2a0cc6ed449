import TodayHost
import TodayStore

/// `POST /v1/sessions/{id}/steps`: several inputs applied in order in one transaction, all or
/// nothing. A step may use a value of the session as it stands at that step:
/// `{"$ref": "document.requestId"}` anywhere in a step reads the session view's field.
struct StepsHandler: Sendable {
    let store: SessionStore
    let scheduler: WallClockScheduler?
    let log: RequestLog
    let fields: FieldChecks

    /// Each step key (its decoder: `InputDecoding.decoder(forChannel:)`) and the body whose fields
    /// it checks (`webEvent`: none, H21).
    static let kinds: [(key: String, body: ControlBody?)] = [
        ("gesture", .gesture), ("lifecycle", .lifecycle), ("webEvent", nil), ("command", .command), ("clock", .clock),
    ]

    /// The most steps one batch takes (and one export page holds): one transaction holds the
    /// writer for as long as its steps take, and its answer carries a view per step.
    static let maximumSteps = 1000

    func steps(_ request: HTTPRequest, _ path: PathParameters) throws(APIError) -> HTTPResponse {
        let mode = try fields.mode(request)
        let (steps, unknown) = try Self.decode(request.body)
        let warnings = try FieldWarnings(mode: mode, found: unknown)
        let expectedVersion = try Conditional.expectedVersion(request)
        return try Submission(store: store, scheduler: scheduler, log: log).submit(steps, to: path["id"], ifVersion: expectedVersion,
                                                                                  for: request, warnings: warnings, answer: .steps, asBatch: true)
    }

    /// Each element must hold exactly one of `gesture`, `lifecycle`, `webEvent`, `command`,
    /// `clock`; its body is what that endpoint takes, `$ref`s resolved when the step runs.
    /// `unknown`: the steps' unknown fields, at their path (`steps[3].gesture.requestID`).
    static func decode(_ body: [UInt8]) throws(APIError) -> (steps: [SessionStore.Step], unknown: [FieldWarning]) {
        let value: JSON
        do {
            value = try JSON.parse(bytes: body)
        } catch {
            throw .invalidJSON("the body is not JSON: \(error)")
        }
        guard case let .array(elements) = value else { throw .invalidJSON("expected an array of steps, got \(value.typeName)") }
        guard !elements.isEmpty else { throw .invalidField("steps", "give at least one step") }
        guard elements.count <= maximumSteps else {
            throw .invalidField("steps", "give at most \(maximumSteps) steps, got \(elements.count); send longer scripts (an export's pages) as several batches")
        }
        var steps: [SessionStore.Step] = []
        var unknown: [FieldWarning] = []
        for (index, element) in elements.enumerated() {
            guard case let .object(members) = element, members.count == 1,
                  let kind = kinds.first(where: { $0.key == members[0].0 }), let decode = InputDecoding.decoder(forChannel: kind.key)
            else {
                throw .invalidField("steps[\(index)]", "step \(index): an object with exactly one of gesture, lifecycle, webEvent, command, clock")
            }
            let body = members[0].1
            // A body that is one `$ref` has no fields of its own to check; `$ref`s inside replace
            // values only, so the fields are known before they are resolved.
            if let checked = kind.body, !StepReferences.isReference(body) {
                unknown += checked.unknownFields(in: body).map { $0.within("steps[\(index)].\(kind.key).") }
            }
            // The view is made only for a step that reads it (resolved by the store as the step
            // runs): making it per step costs a batch time in the square of its length once the
            // view grows with each step.
            if StepReferences.containsReference(body) {
                steps.append(.reference(channel: kind.key, body: body))
                continue
            }
            // Decoded here, not by the writer in the batch's transaction; a step that does not
            // decode still fails in its turn (an earlier step's refusal comes first).
            do throws(InputProblem) {
                steps.append(.input(try decode(BodyFields.object(body))))
            } catch {
                steps.append(.refused(error))
            }
        }
        return (steps, unknown)
    }
}

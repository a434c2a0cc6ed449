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

    /// Each step key, its decoder and the body whose fields it checks (`webEvent`: none, H21).
    static let kinds: [(key: String, body: ControlBody?, decode: @Sendable (BodyFields) throws(APIError) -> Input)] = [
        ("gesture", .gesture, Decoded.http(InputDecoding.gesture)), ("lifecycle", .lifecycle, Decoded.http(InputDecoding.lifecycle)),
        ("webEvent", nil, Decoded.http(InputDecoding.webEvent)), ("command", .command, Decoded.http(InputDecoding.command)),
        ("clock", .clock, Decoded.http(InputDecoding.clock)),
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
                                                                                  for: request, warnings: warnings) {
            writes in Self.answer(writes).body
        }
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
                  let kind = kinds.first(where: { $0.key == members[0].0 })
            else {
                throw .invalidField("steps[\(index)]", "step \(index): an object with exactly one of gesture, lifecycle, webEvent, command, clock")
            }
            let body = members[0].1
            let decode = kind.decode
            // A body that is one `$ref` has no fields of its own to check; `$ref`s inside replace
            // values only, so the fields are known before they are resolved.
            if let checked = kind.body, !isReference(body) {
                unknown += checked.unknownFields(in: body).map { $0.within("steps[\(index)].\(kind.key).") }
            }
            // The view is made only for a step that reads it: making it per step costs a
            // batch time in the square of its length once the view grows with each step.
            let readsView = containsReference(body)
            if !readsView {
                // Decoded here, not by the writer in the batch's transaction; a step that does
                // not decode still fails in its turn (an earlier step's refusal comes first).
                do throws(APIError) {
                    let input = try decode(Decoded.object(body))
                    // A batch of one stays a batch (its refusal names step 0), not a single input.
                    steps.append(elements.count > 1 ? .input(input) : .resolve { _ in .success(input) })
                } catch {
                    let failure = StepError(error)
                    steps.append(.resolve { _ in .failure(.unresolved(failure)) })
                }
                continue
            }
            steps.append(.resolve { session in
                let resolved: JSON
                switch resolveReferences(in: body, view: session.view) {
                case let .success(value): resolved = value
                case let .failure(error): return .failure(.unresolved(error))
                }
                do throws(APIError) {
                    return .success(try decode(Decoded.object(resolved)))
                } catch {
                    return .failure(.unresolved(StepError(error)))
                }
            })
        }
        return (steps, unknown)
    }

    /// Whether `value` is one `{"$ref": …}`.
    static func isReference(_ value: JSON) -> Bool {
        guard case let .object(members) = value else { return false }
        return members.count == 1 && members[0].0 == "$ref"
    }

    /// Whether `value` holds a `$ref` key anywhere.
    static func containsReference(_ value: JSON) -> Bool {
        switch value {
        case let .object(members): return members.contains { $0.0 == "$ref" || containsReference($0.1) }
        case let .array(items): return items.contains(where: containsReference)
        case .null, .bool, .int, .double, .string: return false
        }
    }

    /// Replaces every `{"$ref": "a.b.0.c"}` with that value of the session view.
    static func resolveReferences(in value: JSON, view: JSON) -> Result<JSON, StepError> {
        switch value {
        case let .object(members):
            if members.count == 1, members[0].0 == "$ref" {
                guard let path = members[0].1.stringValue else {
                    return .failure(StepError(code: "invalid_field", status: 400, detail: "$ref must be a string path", field: "$ref"))
                }
                var current: JSON? = view
                for part in path.split(separator: ".") {
                    if case let .array(items)? = current, let index = Int(part) {
                        current = items.indices.contains(index) ? items[index] : nil
                    } else {
                        current = current?[String(part)]
                    }
                }
                guard let found = current, !found.isNull else {
                    return .failure(StepError(code: "invalid_field", status: 400,
                                              detail: "$ref \(path) is not set in the session at this step", field: "$ref"))
                }
                return .success(found)
            }
            var resolved: [(String, JSON)] = []
            for (key, member) in members {
                switch resolveReferences(in: member, view: view) {
                case let .success(value): resolved.append((key, value))
                case let .failure(error): return .failure(error)
                }
            }
            return .success(.object(resolved))
        case let .array(items):
            var resolved: [JSON] = []
            for item in items {
                switch resolveReferences(in: item, view: view) {
                case let .success(value): resolved.append(value)
                case let .failure(error): return .failure(error)
                }
            }
            return .success(.array(resolved))
        case .null, .bool, .int, .double, .string:
            return .success(value)
        }
    }

    /// `{"results": [input response…], "session": view}`.
    static func answer(_ writes: [SessionStore.Write]) -> HTTPResponse {
        var bytes = Array(#"{"results":["#.utf8)
        var lastView: [UInt8] = []
        for (index, write) in writes.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            lastView = index == writes.count - 1 ? write.viewBytes : write.stored.viewBytes
            bytes += Responses.input(write, view: lastView).body
        }
        bytes += Array(#"],"session":"#.utf8)
        bytes += lastView
        bytes.append(UInt8(ascii: "}"))
        return .jsonBytes(bytes)
    }
}

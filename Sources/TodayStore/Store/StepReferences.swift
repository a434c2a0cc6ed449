import TodayHost

/// A `/steps` element that reads the session as it stands at that step: every
/// `{"$ref": "a.b.0.c"}` in its body replaced with that value of the session view, then the body
/// decoded as its endpoint's (`InputDecoding`). Data until the step runs, inside the batch's
/// transaction: nothing of the server's runs there.
package enum StepReferences {
    /// The input `body` (a `/steps` element's, under key `channel`) makes against `view`.
    static func input(channel: String, body: JSON, view: JSON) -> Result<Input, InputProblem> {
        guard let decode = InputDecoding.decoder(forChannel: channel) else {
            return .failure(.invalidField("steps", "no step kind \(channel)"))
        }
        switch resolve(in: body, view: view) {
        case let .failure(problem): return .failure(problem)
        case let .success(resolved):
            do throws(InputProblem) {
                return .success(try decode(BodyFields.object(resolved)))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Whether `value` is one `{"$ref": …}`.
    package static func isReference(_ value: JSON) -> Bool {
        guard case let .object(members) = value else { return false }
        return members.count == 1 && members[0].0 == "$ref"
    }

    /// Whether `value` holds a `$ref` key anywhere.
    package static func containsReference(_ value: JSON) -> Bool {
        switch value {
        case let .object(members): return members.contains { $0.0 == "$ref" || containsReference($0.1) }
        case let .array(items): return items.contains(where: containsReference)
        case .null, .bool, .int, .double, .string: return false
        }
    }

    /// Replaces every `{"$ref": "a.b.0.c"}` with that value of the session view.
    static func resolve(in value: JSON, view: JSON) -> Result<JSON, InputProblem> {
        switch value {
        case let .object(members):
            if members.count == 1, members[0].0 == "$ref" {
                guard let path = members[0].1.stringValue else {
                    return .failure(InputProblem(code: .invalidField, detail: "$ref must be a string path", field: "$ref"))
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
                    return .failure(InputProblem(code: .invalidField, detail: "$ref \(path) is not set in the session at this step",
                                                 field: "$ref"))
                }
                return .success(found)
            }
            var resolved: [(String, JSON)] = []
            for (key, member) in members {
                switch resolve(in: member, view: view) {
                case let .success(value): resolved.append((key, value))
                case let .failure(problem): return .failure(problem)
                }
            }
            return .success(.object(resolved))
        case let .array(items):
            var resolved: [JSON] = []
            for item in items {
                switch resolve(in: item, view: view) {
                case let .success(value): resolved.append(value)
                case let .failure(problem): return .failure(problem)
                }
            }
            return .success(.array(resolved))
        case .null, .bool, .int, .double, .string:
            return .success(value)
        }
    }
}

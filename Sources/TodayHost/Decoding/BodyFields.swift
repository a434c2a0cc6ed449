/// Reads a request body's fields, turning every problem into the contract's `400`s.
/// `null` counts as absent for optional fields; unknown fields are not read here (`ControlBody`
/// names them, the HTTP edge warns about them).
package struct BodyFields {
    package let object: JSON
    /// Prefix for field names in errors (`timing.`).
    package var path = ""

    /// The body as a JSON object, or `invalid_json`.
    package static func object(from body: [UInt8]) throws(InputProblem) -> BodyFields {
        let value: JSON
        do {
            value = try JSON.parse(bytes: body)
        } catch {
            throw .invalidJSON(body.isEmpty ? "the body is empty; expected a JSON object" : "the body is not JSON: \(error)")
        }
        return try object(value)
    }

    /// A parsed body as a JSON object, or `invalid_json`.
    package static func object(_ value: JSON) throws(InputProblem) -> BodyFields {
        guard case .object = value else { throw .invalidJSON("expected a JSON object, got \(value.typeName)") }
        return BodyFields(object: value)
    }

    package func name(_ key: String) -> String { path + key }

    package func present(_ key: String) -> JSON? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    /// A string as it came; a field the server keeps goes through `identifier` or `text`
    /// (FieldLimits) instead, or is checked against a pattern (a session id).
    package func string(_ key: String) throws(InputProblem) -> String? {
        guard let value = present(key) else { return nil }
        guard let text = value.stringValue else { throw .invalidField(name(key), "must be a string, got \(value.typeName)") }
        return text
    }

    /// The largest integer the contract accepts anywhere (OpenAPI `maximum`): ~285,000 years
    /// of milliseconds, far from `Int64` overflow when added to a clock.
    package static let largestInteger: Int64 = 9_000_000_000_000_000

    package func integer(_ key: String) throws(InputProblem) -> Int64? {
        guard let value = present(key) else { return nil }
        guard let number = value.int64Value else { throw .invalidField(name(key), "must be an integer, got \(value.serialized())") }
        guard number <= Self.largestInteger else {
            throw .invalidField(name(key), "must be at most \(Self.largestInteger), got \(number)")
        }
        return number
    }

    package func bool(_ key: String) throws(InputProblem) -> Bool? {
        guard let value = present(key) else { return nil }
        guard let flag = value.boolValue else { throw .invalidField(name(key), "must be a boolean, got \(value.typeName)") }
        return flag
    }

    package func oneOf<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws(InputProblem) -> T? where T.RawValue == String {
        guard let text = try identifier(key) else { return nil }
        guard let value = T(rawValue: text) else {
            let choices = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            throw .invalidField(name(key), "must be \(choices), got \"\(text)\"")
        }
        return value
    }

    package func nested(_ key: String) throws(InputProblem) -> BodyFields? {
        guard let value = present(key) else { return nil }
        guard case .object = value else { throw .invalidField(name(key), "must be an object, got \(value.typeName)") }
        return BodyFields(object: value, path: name(key) + ".")
    }
}

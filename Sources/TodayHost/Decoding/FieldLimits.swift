/// How much a client may put in one field (docs/LIMITS.md; OpenAPI `maxLength`). A value is
/// copied into views, document URLs, analytics and timeline entries, and a list answers up to
/// 1,000 views: an unbounded field multiplies into the database and into every answer.
/// Lengths count characters (Unicode scalars), as JSON Schema's `maxLength` does.
package enum FieldLimits {
    /// Ids, names and keys: uid, label, language, route, request, batch and action ids, …
    package static let identifier = 256
    /// Free text: a chat draft, a dialog title, an error message, a URL.
    package static let text = 4096
    /// Items of an array: capabilities, dialog actions.
    package static let items = 32
    /// An arbitrary JSON value (a `track`'s `properties`, a result's `error`, analytics `ctx`),
    /// serialized.
    package static let payloadBytes = 16 * 1024
    /// One input as stored (its `input` timeline entry's `data.input`), serialized.
    package static let inputBytes = 64 * 1024

    /// Why `value` is no identifier, or `nil`. Control characters are refused because the
    /// index columns store text up to the first NUL while views show all of it, so a filter
    /// would match (and a purge remove) another value than the one shown.
    package static func identifierProblem(_ value: String) -> String? {
        var count = 0
        for scalar in value.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                return "must not contain control characters (U+0000–U+001F, U+007F)"
            }
            count += 1
            if count > identifier { return "must be at most \(identifier) characters" }
        }
        return nil
    }

    /// Why `value` is too long for free text, or `nil`.
    package static func textProblem(_ value: String) -> String? {
        hasMore(value, than: text) ? "must be at most \(text) characters" : nil
    }

    /// Why `value`, serialized, is too large for a payload of `limit` bytes, or `nil`.
    package static func sizeProblem(_ value: JSON, limit: Int = payloadBytes) -> String? {
        var bytes: [UInt8] = []
        value.write(to: &bytes)
        return bytes.count > limit ? "is \(bytes.count) bytes as JSON; at most \(limit)" : nil
    }

    /// Stops counting at `limit + 1`: a 1 MiB string costs no more than a short one.
    private static func hasMore(_ value: String, than limit: Int) -> Bool {
        guard value.utf8.count > limit else { return false }
        var count = 0
        for _ in value.unicodeScalars {
            count += 1
            if count > limit { return true }
        }
        return false
    }
}

extension BodyFields {
    /// A string field that names something: at most `FieldLimits.identifier` characters, no
    /// control characters.
    package func identifier(_ key: String) throws(InputProblem) -> String? {
        guard let value = try string(key) else { return nil }
        if let problem = FieldLimits.identifierProblem(value) { throw .invalidField(name(key), problem) }
        return value
    }

    package func nonEmptyIdentifier(_ key: String) throws(InputProblem) -> String? {
        guard let value = try identifier(key) else { return nil }
        guard !value.isEmpty else { throw .invalidField(name(key), "must be a non-empty string") }
        return value
    }

    /// A free-text field: at most `FieldLimits.text` characters.
    package func text(_ key: String) throws(InputProblem) -> String? {
        guard let value = try string(key) else { return nil }
        if let problem = FieldLimits.textProblem(value) { throw .invalidField(name(key), problem) }
        return value
    }

    /// Any JSON value but `null` (absent), at most `FieldLimits.payloadBytes` serialized.
    package func payload(_ key: String) throws(InputProblem) -> JSON? {
        guard let value = present(key) else { return nil }
        if let problem = FieldLimits.sizeProblem(value) { throw .invalidField(name(key), problem) }
        return value
    }

    /// An array of identifiers, at most `FieldLimits.items` of them.
    package func identifiers(_ key: String) throws(InputProblem) -> [String]? {
        guard let value = present(key) else { return nil }
        guard case let .array(elements) = value else { throw .invalidField(name(key), "must be an array of strings") }
        guard elements.count <= FieldLimits.items else {
            throw .invalidField(name(key), "must have at most \(FieldLimits.items) items, got \(elements.count)")
        }
        var result: [String] = []
        for (index, element) in elements.enumerated() {
            guard let text = element.stringValue else { throw .invalidField(name(key), "must be an array of strings") }
            if let problem = FieldLimits.identifierProblem(text) { throw .invalidField(name(key), "item \(index) \(problem)") }
            result.append(text)
        }
        return result
    }
}

/// A JSON value that keeps object keys in their written order, so that a payload the host
/// emits is byte-for-byte what Web receives and a timeline reads the same on every run.
package enum JSON: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    package static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case let .bool(value): hasher.combine(value)
        case let .int(value): hasher.combine(value)
        case let .double(value): hasher.combine(value)
        case let .string(value): hasher.combine(value)
        case let .array(values): hasher.combine(values)
        case let .object(members):
            for (key, value) in members {
                hasher.combine(key)
                hasher.combine(value)
            }
        }
    }

    /// The member named `key` of an object (the last of duplicates, as JavaScript's
    /// `JSON.parse` keeps it); `nil` for other values.
    package subscript(key: String) -> JSON? {
        guard case let .object(members) = self else { return nil }
        return members.last(where: { $0.0 == key })?.1
    }

    package var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    package var arrayValue: [JSON]? {
        if case let .array(items) = self { return items }
        return nil
    }

    package var boolValue: Bool? {
        if case let .bool(value) = self { return value }
        return nil
    }

    /// The value of a number, whichever way it was written.
    package var numberValue: Double? {
        switch self {
        case let .int(value): return Double(value)
        case let .double(value): return value
        default: return nil
        }
    }

    package var int64Value: Int64? {
        switch self {
        case let .int(value): return value
        case let .double(value):
            guard value.rounded() == value, abs(value) < 9.0e15 else { return nil }
            return Int64(value)
        default: return nil
        }
    }

    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the value's JSON type, for error messages.
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .int(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSON...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
    package init(nilLiteral: ()) { self = .null }
}

extension JSON {
    /// `.string(value)` or `.null` for an absent value.
    package static func string(_ value: String?) -> JSON {
        value.map(JSON.string) ?? .null
    }

    package static func int(_ value: Int) -> JSON { .int(Int64(value)) }

    package static func int(_ value: Int?) -> JSON {
        value.map { .int(Int64($0)) } ?? .null
    }

    package static func strings(_ values: [String]) -> JSON {
        .array(values.map(JSON.string))
    }
}

extension JSON: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        self = try JSON.parse(text)
    }

    /// Encoded as its own JSON text inside a string, so key order survives any `Encoder`.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(serialized())
    }
}

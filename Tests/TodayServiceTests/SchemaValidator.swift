import Foundation
import TodayHost

/// Validates JSON values against the schemas of the OpenAPI document (JSON Schema 2020-12, the
/// subset the document uses): `$ref` to `#/components/schemas/…`, `type`, `const`, `enum`,
/// `properties`, `required`, `additionalProperties`, `items`, `minItems`, `maxItems`,
/// `minLength`, `maxLength` (in code points), `pattern`, `minimum`, `maximum`, `oneOf`, `anyOf`,
/// `allOf`, `not`, `if`/`then`/`else`. Annotations (`description`, `examples`, `discriminator`,
/// `x-…` and the like) do not constrain. Any other keyword is reported as a problem, so a
/// schema that grows one this validator does not know fails the tests instead of passing
/// unchecked.
struct SchemaValidator {
    /// `components.schemas` of the document.
    let schemas: [String: JSON]

    static let annotations: Set<String> = ["description", "title", "examples", "example", "default", "discriminator",
                                           "deprecated", "readOnly", "writeOnly", "format", "$comment"]

    init(document: JSON) throws {
        guard case let .object(members)? = document["components"]?["schemas"] else {
            throw SchemaProblem(path: "$", problem: "the document has no components.schemas")
        }
        schemas = Dictionary(members, uniquingKeysWith: { first, _ in first })
    }

    struct SchemaProblem: Error, CustomStringConvertible {
        var path: String
        var problem: String
        var description: String { "\(path): \(problem)" }
    }

    /// The schema a `#/components/schemas/Name` reference names.
    func schema(ref: String) throws -> JSON {
        let prefix = "#/components/schemas/"
        guard ref.hasPrefix(prefix), let schema = schemas[String(ref.dropFirst(prefix.count))] else {
            throw SchemaProblem(path: ref, problem: "no such schema")
        }
        return schema
    }

    /// Every way `value` breaks the schema named `name` (empty: it conforms).
    func problems(_ value: JSON, against name: String) throws -> [String] {
        try problems(value, schema: try schema(ref: "#/components/schemas/\(name)"), path: "$")
    }

    func problems(_ value: JSON, schema: JSON, path: String) throws -> [String] {
        if case let .bool(accepts) = schema { return accepts ? [] : ["\(path): no value is allowed here"] }
        guard case let .object(keywords) = schema else { throw SchemaProblem(path: path, problem: "a schema that is no object") }
        var found: [String] = []
        for (keyword, argument) in keywords {
            if Self.annotations.contains(keyword) || keyword.hasPrefix("x-") { continue }
            switch keyword {
            case "$ref":
                guard let ref = argument.stringValue else { throw SchemaProblem(path: path, problem: "$ref is no string") }
                found += try problems(value, schema: try self.schema(ref: ref), path: path)
            case "type":
                let allowed = argument.arrayValue?.compactMap(\.stringValue) ?? [argument.stringValue ?? ""]
                if !allowed.contains(where: { Self.isOfType(value, $0) }) {
                    found.append("\(path): is \(value.typeName), not \(allowed.joined(separator: " or "))")
                }
            case "const":
                if !Self.same(value, argument) { found.append("\(path): must be \(argument.serialized()), got \(value.serialized())") }
            case "enum":
                let choices = argument.arrayValue ?? []
                if !choices.contains(where: { Self.same(value, $0) }) {
                    found.append("\(path): \(value.serialized()) is none of \(argument.serialized())")
                }
            case "required":
                guard case .object = value else { continue }
                for name in argument.arrayValue?.compactMap(\.stringValue) ?? [] where value[name] == nil {
                    found.append("\(path): lacks required \(name)")
                }
            case "properties":
                guard case let .object(members) = value, case let .object(properties) = argument else { continue }
                for (name, member) in members {
                    if let sub = properties.first(where: { $0.0 == name })?.1 {
                        found += try problems(member, schema: sub, path: "\(path).\(name)")
                    }
                }
            case "additionalProperties":
                guard case let .object(members) = value else { continue }
                let declared = Set(schema["properties"]?.objectKeys ?? [])
                for (name, member) in members where !declared.contains(name) {
                    found += try problems(member, schema: argument, path: "\(path).\(name)")
                        .map { $0.hasSuffix("no value is allowed here") ? "\(path): has \(name), which the schema does not allow" : $0 }
                }
            case "items":
                guard case let .array(items) = value else { continue }
                for (index, item) in items.enumerated() {
                    found += try problems(item, schema: argument, path: "\(path)[\(index)]")
                }
            case "minItems", "maxItems":
                guard case let .array(items) = value, let bound = argument.int64Value else { continue }
                if keyword == "minItems" ? items.count < bound : items.count > bound {
                    found.append("\(path): \(items.count) items breaks \(keyword) \(bound)")
                }
            case "minLength", "maxLength":
                guard let text = value.stringValue, let bound = argument.int64Value else { continue }
                let length = text.unicodeScalars.count
                if keyword == "minLength" ? length < bound : length > bound {
                    found.append("\(path): length \(length) breaks \(keyword) \(bound)")
                }
            case "pattern":
                guard let text = value.stringValue, let pattern = argument.stringValue else { continue }
                let expression = try NSRegularExpression(pattern: pattern)
                if expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
                    found.append("\(path): \(value.serialized()) does not match \(pattern)")
                }
            case "minimum", "maximum":
                guard let number = value.numberValue, !value.isBool, let bound = argument.numberValue else { continue }
                if keyword == "minimum" ? number < bound : number > bound {
                    found.append("\(path): \(number) breaks \(keyword) \(bound)")
                }
            case "oneOf", "anyOf":
                let options = argument.arrayValue ?? []
                var passing = 0
                var reasons: [String] = []
                for (index, option) in options.enumerated() {
                    let optionProblems = try problems(value, schema: option, path: path)
                    if optionProblems.isEmpty { passing += 1 } else { reasons.append("#\(index + 1): \(optionProblems.joined(separator: "; "))") }
                }
                if passing == 0 {
                    found.append("\(path): matches none of \(keyword) (\(reasons.joined(separator: " | ")))")
                } else if keyword == "oneOf", passing > 1 {
                    found.append("\(path): matches \(passing) options of oneOf, not exactly one")
                }
            case "allOf":
                for option in argument.arrayValue ?? [] { found += try problems(value, schema: option, path: path) }
            case "not":
                if try problems(value, schema: argument, path: path).isEmpty { found.append("\(path): matches a schema it must not") }
            case "if":
                let branch = try problems(value, schema: argument, path: path).isEmpty ? "then" : "else"
                if let chosen = schema[branch] { found += try problems(value, schema: chosen, path: path) }
            case "then", "else":
                continue  // read with `if`
            default:
                throw SchemaProblem(path: path, problem: "keyword \(keyword) is outside what this validator checks")
            }
        }
        return found
    }

    static func isOfType(_ value: JSON, _ type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("integer", .int): return true
        case let ("integer", .double(number)): return number.rounded() == number
        case ("number", .int), ("number", .double): return true
        default: return false
        }
    }

    /// JSON Schema equality: numbers by value (1 and 1.0 are one), the rest structurally.
    static func same(_ a: JSON, _ b: JSON) -> Bool {
        if !a.isBool, !b.isBool, let x = a.numberValue, let y = b.numberValue { return x == y }
        switch (a, b) {
        case let (.array(left), .array(right)):
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        case let (.object(left), .object(right)):
            return left.count == right.count && left.allSatisfy { name, value in b[name].map { same(value, $0) } ?? false }
        default:
            return a == b
        }
    }
}

extension JSON {
    var isBool: Bool {
        if case .bool = self { return true }
        return false
    }
}

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TodayHost

// MARK: Shared helpers of the monitor tests

extension Client {
    /// Posts an input to `…/{id}/{endpoint}` and requires a `200`.
    @discardableResult
    func input(_ id: String, _ endpoint: String, _ body: JSON,
               sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        let reply = try await post("/v1/sessions/\(id)/\(endpoint)", body)
        // The server's own log with a failure: which requests it saw, and what its storage said.
        let log = server.logLines.all.suffix(30).joined(separator: "\n")
        try #require(reply.status == 200, "\(endpoint) \(body.serialized()): \(reply.text)\nserver \(server.base) log:\n\(log)",
                     sourceLocation: sourceLocation)
        return reply
    }
}

func items(_ json: JSON?) -> [JSON] {
    guard case let .array(values)? = json else { return [] }
    return values
}

/// An object's members by name (order-insensitive comparisons).
func members(_ json: JSON) -> [String: JSON] {
    guard case let .object(fields) = json else { return [:] }
    return Dictionary(fields, uniquingKeysWith: { $1 })
}

func violationCodes(_ violations: JSON?) -> [String] {
    items(violations).map { $0["data"]?["code"]?.stringValue ?? "?" }
}

/// An XML element as XMLParser reported it.
final class ParsedXMLElement {
    let name: String
    let attributes: [String: String]
    var text = ""
    var children: [ParsedXMLElement] = []

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }
}

struct XMLParseFailure: Error, CustomStringConvertible {
    var description: String
}

/// Parses a document with Foundation's XMLParser; throws unless it is well-formed.
func parseXML(_ bytes: [UInt8]) throws -> ParsedXMLElement {
    final class Builder: NSObject, XMLParserDelegate {
        var stack: [ParsedXMLElement] = []
        var root: ParsedXMLElement?
        var failure: String?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            let node = ParsedXMLElement(name: elementName, attributes: attributeDict)
            if let parent = stack.last { parent.children.append(node) } else { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            failure = "\(parseError)"
        }
    }
    let builder = Builder()
    let parser = XMLParser(data: Data(bytes))
    parser.delegate = builder
    let parsed = parser.parse()
    guard parsed, builder.failure == nil, let root = builder.root else {
        throw XMLParseFailure(description: "not well-formed (\(builder.failure ?? parser.parserError.map { "\($0)" } ?? "no root")): \(String(decoding: bytes, as: UTF8.self))")
    }
    // Whitespace between elements is not text.
    func trim(_ node: ParsedXMLElement) {
        if !node.children.isEmpty { node.text = node.text.trimmingCharacters(in: .whitespacesAndNewlines) }
        node.children.forEach(trim)
    }
    trim(root)
    return root
}

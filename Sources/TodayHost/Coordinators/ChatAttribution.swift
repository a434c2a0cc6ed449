/// Chat attribution (H25): a trusted card link prefills the chat draft and remembers which
/// widget it came from, until the user sends.
package struct ChatAttribution: Codable, Equatable, Sendable {
    package private(set) var draft: String?
    /// `msg_trigger_ele_id` of the last card link, carried into the next `chat_query_submit`.
    package private(set) var pendingTriggerId: String?
    /// The link's `today_*` parameters, in link order.
    package private(set) var attribution: [Parameter] = []

    package struct Parameter: Codable, Equatable, Sendable {
        package var name: String
        package var value: String
    }

    package init() {}

    /// A trusted `today://chat…` link: a later card link overwrites both draft and id.
    mutating func linkOpened(_ link: DeepLink) {
        draft = link.firstValue(of: "text") ?? ""
        pendingTriggerId = link.firstValue(of: "msg_trigger_ele_id")
        var seen: Set<String> = []
        attribution = link.query.filter { $0.name.hasPrefix("today_") && seen.insert($0.name).inserted }
            .map { Parameter(name: $0.name, value: $0.value) }
    }

    /// The user edits the draft: the id stays.
    mutating func edit(text: String) {
        draft = text
    }

    /// The user sends: `nil` (ignored, `noDraft`) without a draft, else the analytics properties.
    mutating func send() -> [(String, JSON)]? {
        guard let draft, !draft.isEmpty else { return nil }
        var properties: [(String, JSON)] = [("text", .string(draft))]
        if let pendingTriggerId { properties.append(("msg_trigger_ele_id", .string(pendingTriggerId))) }
        properties += attribution.map { ($0.name, JSON.string($0.value)) }
        clear()
        return properties
    }

    /// H19: an account switch forgets the draft and the id.
    mutating func clear() {
        draft = nil
        pendingTriggerId = nil
        attribution = []
    }
}

extension ChatAttribution: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.optional(draft) { $0.string($1) }
        writer.optional(pendingTriggerId) { $0.string($1) }
        writer.array(attribution) { writer, parameter in
            writer.string(parameter.name)
            writer.string(parameter.value)
        }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        draft = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        pendingTriggerId = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        attribution = try reader.array { reader throws(StateDecodingError) in
            Parameter(name: try reader.string(), value: try reader.string())
        }
    }
}

/// The limits of a Web → native bridge message (docs/LIMITS.md), checked at the HTTP edge
/// before the bridge parses it. Only sizes and control characters are judged here: a field of
/// the wrong type or value is still the bridge's to reject (H21, M8), but a message the
/// server would not store is no evidence against Web's side of the contract.
package enum WebEventLimits {
    /// The bridge's fields that name something (BridgeParser): identifiers.
    package static let identifierFields: Set<String> = [
        "type", "requestId", "batchId", "loadId", "terminalEvent", "mode", "status", "presentation", "owner", "reason",
        "event",
    ]

    /// Every top-level string is an identifier (named above) or text; every object or array is
    /// a payload; dialog `actions` are bounded item by item; and the message as a whole is one
    /// stored input.
    package static func check(_ message: JSON) throws(InputProblem) {
        guard case let .object(members) = message else { return }
        for (name, value) in members {
            switch value {
            case let .string(text):
                let problem = identifierFields.contains(name) ? FieldLimits.identifierProblem(text) : FieldLimits.textProblem(text)
                if let problem { throw .invalidField(name, problem) }
            case let .array(elements) where name == "actions":
                try checkActions(elements)
                if let problem = FieldLimits.sizeProblem(value) { throw .invalidField(name, problem) }
            case .object, .array:
                if let problem = FieldLimits.sizeProblem(value) { throw .invalidField(name, problem) }
            case .null, .bool, .int, .double:
                break
            }
        }
        if let problem = FieldLimits.sizeProblem(message, limit: FieldLimits.inputBytes) {
            throw .invalidField("body", "the message \(problem)")
        }
    }

    /// `nativeDialog.present`'s actions (H27), named as the bridge names them (`actions[1].title`).
    private static func checkActions(_ actions: [JSON]) throws(InputProblem) {
        guard actions.count <= FieldLimits.items else {
            throw .invalidField("actions", "must have at most \(FieldLimits.items) items, got \(actions.count)")
        }
        for (index, action) in actions.enumerated() {
            for key in ["actionId", "role"] {
                if let text = action[key]?.stringValue, let problem = FieldLimits.identifierProblem(text) {
                    throw .invalidField("actions[\(index)].\(key)", problem)
                }
            }
            if let title = action["title"]?.stringValue, let problem = FieldLimits.textProblem(title) {
                throw .invalidField("actions[\(index)].title", problem)
            }
        }
    }
}

/// Reads the fields of one bridge message, naming the field and the problem when one breaks.
/// An optional field given as `null` counts as absent, as `JSON.stringify` drops `undefined`
/// and a native `as? String` reads `null` as nothing.
struct BridgeFields {
    let message: JSON

    private func present(_ name: String) -> JSON? {
        guard let value = message[name], !value.isNull else { return nil }
        return value
    }

    private func required(_ name: String) throws(BridgeRejection) -> JSON {
        guard let value = present(name) else { throw BridgeRejection(field: name, problem: "is required") }
        return value
    }

    /// `todayPage.*` events require `schemaVersion: 1`; on others it is optional but must be 1.
    func schemaVersion(required isRequired: Bool) throws(BridgeRejection) {
        guard let value = present("schemaVersion") else {
            if isRequired { throw BridgeRejection(field: "schemaVersion", problem: "is required and must be 1") }
            return
        }
        guard value.numberValue == 1 else {
            throw BridgeRejection(field: "schemaVersion", problem: "must be 1, got \(value.serialized())")
        }
    }

    func string(_ name: String) throws(BridgeRejection) -> String {
        let value = try required(name)
        guard let text = value.stringValue else {
            throw BridgeRejection(field: name, problem: "must be a string, got \(value.typeName)")
        }
        return text
    }

    func nonEmptyString(_ name: String) throws(BridgeRejection) -> String {
        let text = try string(name)
        guard !text.isEmpty else { throw BridgeRejection(field: name, problem: "must be a non-empty string") }
        return text
    }

    func optionalString(_ name: String) throws(BridgeRejection) -> String? {
        guard present(name) != nil else { return nil }
        return try string(name)
    }

    @discardableResult
    func literal(_ name: String, allowed: [String]) throws(BridgeRejection) -> String {
        let text = try string(name)
        guard allowed.contains(text) else {
            let choices = allowed.map { "\"\($0)\"" }.joined(separator: " or ")
            throw BridgeRejection(field: name, problem: "must be \(choices), got \"\(text)\"")
        }
        return text
    }

    func bool(_ name: String) throws(BridgeRejection) -> Bool {
        let value = try required(name)
        guard let flag = value.boolValue else {
            throw BridgeRejection(field: name, problem: "must be a boolean, got \(value.typeName)")
        }
        return flag
    }

    func elapsedMs(required isRequired: Bool) throws(BridgeRejection) -> Double? {
        guard let value = present("elapsedMs") else {
            if isRequired { throw BridgeRejection(field: "elapsedMs", problem: "is required") }
            return nil
        }
        guard let number = value.numberValue else {
            throw BridgeRejection(field: "elapsedMs", problem: "must be a number, got \(value.typeName)")
        }
        guard number >= 0 else { throw BridgeRejection(field: "elapsedMs", problem: "must be >= 0") }
        return number
    }

    func optionalObject(_ name: String) throws(BridgeRejection) -> JSON? {
        guard let value = present(name) else { return nil }
        guard case .object = value else {
            throw BridgeRejection(field: name, problem: "must be an object, got \(value.typeName)")
        }
        return value
    }

    /// `actions`: a non-empty array of `{actionId, title, role?}` with distinct ids (H27).
    func dialogActions() throws(BridgeRejection) -> [BridgeEvent.DialogAction] {
        let value = try required("actions")
        guard case let .array(elements) = value, !elements.isEmpty else {
            throw BridgeRejection(field: "actions", problem: "must be a non-empty array")
        }
        var actions: [BridgeEvent.DialogAction] = []
        for (index, element) in elements.enumerated() {
            let item = BridgeFields(message: element)
            let prefix = "actions[\(index)]"
            guard case .object = element else { throw BridgeRejection(field: prefix, problem: "must be an object") }
            let actionId: String
            let title: String
            let role: String?
            do {
                actionId = try item.nonEmptyString("actionId")
                title = try item.string("title")
                role = try item.optionalString("role")
            } catch {
                throw BridgeRejection(field: "\(prefix).\(error.field)", problem: error.problem)
            }
            guard !actions.contains(where: { $0.actionId == actionId }) else {
                throw BridgeRejection(field: "\(prefix).actionId", problem: "repeats \"\(actionId)\"; action ids must be distinct")
            }
            actions.append(BridgeEvent.DialogAction(actionId: actionId, title: title, role: role))
        }
        return actions
    }
}

/// Web's analytics and native → Web commands (H24, H28).
extension HostSession {
    /// H24: Web's event leaves the host with the native base fields; a native value wins.
    func forwardedAnalytics(event: String, webProperties: JSON?) -> Effect {
        var properties: [(String, JSON)] = []
        if case let .object(members)? = webProperties { properties = members }
        for (name, value) in config.analytics.properties(uid: uid) {
            if let index = properties.firstIndex(where: { $0.0 == name }) {
                properties[index].1 = value
            } else {
                properties.append((name, value))
            }
        }
        return .analytics(event: event, properties: .object(properties))
    }

    /// H28: validated here too, so the engine never emits a malformed command.
    mutating func commandSent(_ command: Command, _ log: inout StepLog) throws(InputError) {
        switch command {
        case let .scrollToSection(batchId, _, _):
            guard !batchId.isEmpty else { throw .invalidField("batchId", "must be a non-empty string") }
        }
        perform([.emit(type: command.typeName, requestId: nil, payload: command.payload, rule: .h28)], &log)
    }
}

/// The rest of the bridge surface: analytics, chat links, the creation sheet, dialogs and
/// native → Web commands (H24–H28).
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

    /// H25: only `today://chat…` is routed in-app.
    mutating func navigationAction(url: String) -> Outcome {
        guard let link = DeepLink(url), link.isTrustedChatLink else { return .ignored(.untrustedLink) }
        chat.linkOpened(link)
        return .applied
    }

    /// H26: `{presented}` says whether presentation started.
    mutating func liveWidgetCreationPresent() -> (Outcome, JSON) {
        guard injectedCapabilities.contains(Capability.liveWidgetCreation) else {
            return (.ignored(.capabilityNotAdvertised), ["presented": false])
        }
        return (.applied, ["presented": .bool(liveWidgetSheet.present())])
    }

    /// H27: `{pending: callId}`, `{type: "busy"}` or `{type: "unavailable"}`.
    mutating func nativeDialogPresent(title: String, actions: [BridgeEvent.DialogAction]) -> (Outcome, JSON) {
        guard injectedCapabilities.contains(Capability.nativeDialog) else {
            return (.ignored(.capabilityNotAdvertised), ["type": "unavailable"])
        }
        guard dialog.open == nil else { return (.applied, ["type": "busy"]) }
        dialogCounter += 1
        let callId = RequestIdFactory.uuidV5(name: "\(id)/dialog/\(dialogCounter)")
        guard case let .pending(callId) = dialog.present(callId: callId, title: title, actions: actions) else {
            return (.applied, ["type": "busy"])
        }
        return (.applied, ["pending": .string(callId)])
    }

    /// H19, H20: an open dialog resolves `dismissed`.
    mutating func dismissDialog(_ log: inout StepLog) {
        if case let .resolved(callId, value) = dialog.dismiss() {
            record([.resolution(type: "nativeDialog.present", callId: callId, value: value)], &log)
        }
    }

    /// H28: validated here too, so the engine never emits a malformed command.
    mutating func commandSent(_ command: Command, _ log: inout StepLog) throws(InputError) {
        switch command {
        case let .scrollToSection(batchId, _, _):
            guard !batchId.isEmpty else { throw .invalidField("batchId", "must be a non-empty string") }
        }
        record([.emit(type: command.typeName, requestId: nil, payload: command.payload, rule: .h28)], &log)
    }
}

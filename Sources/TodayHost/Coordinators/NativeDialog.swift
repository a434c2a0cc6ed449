/// The native confirmation dialog (H27): one at a time, settled by the user's choice.
package struct NativeDialog: Codable, Equatable, Sendable {
    package struct Open: Codable, Equatable, Sendable {
        package var callId: String
        package var title: String
        package var actions: [BridgeEvent.DialogAction]
    }

    /// `nil` when no dialog is open.
    package private(set) var open: Open?

    package init() {}

    package enum Presentation: Equatable, Sendable {
        case pending(callId: String)
        case busy
    }

    mutating func present(callId: String, title: String, actions: [BridgeEvent.DialogAction]) -> Presentation {
        guard open == nil else { return .busy }
        open = Open(callId: callId, title: title, actions: actions)
        return .pending(callId: callId)
    }

    package enum Choice: Equatable, Sendable {
        case noDialog
        case unknownAction
        /// The pending call's final value.
        case resolved(callId: String, value: JSON)
    }

    mutating func choose(actionId: String) -> Choice {
        guard let dialog = open else { return .noDialog }
        guard dialog.actions.contains(where: { $0.actionId == actionId }) else { return .unknownAction }
        open = nil
        return .resolved(callId: dialog.callId, value: ["type": "action", "actionId": .string(actionId)])
    }

    /// Dismissed by the user, an account switch or teardown.
    mutating func dismiss() -> Choice {
        guard let dialog = open else { return .noDialog }
        open = nil
        return .resolved(callId: dialog.callId, value: ["type": "dismissed"])
    }
}

extension NativeDialog: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.optional(open) { writer, open in
            writer.string(open.callId)
            writer.string(open.title)
            writer.array(open.actions) { writer, action in
                writer.string(action.actionId)
                writer.string(action.title)
                writer.optional(action.role) { $0.string($1) }
            }
        }
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        open = try reader.optional { reader throws(StateDecodingError) in
            Open(callId: try reader.string(), title: try reader.string(),
                 actions: try reader.array { reader throws(StateDecodingError) in
                     BridgeEvent.DialogAction(actionId: try reader.string(), title: try reader.string(),
                                              role: try reader.optional { reader throws(StateDecodingError) in try reader.string() })
                 })
        }
    }
}

/// The native confirmation dialog (H27): one at a time, settled by the user's choice.
package struct NativeDialog: Equatable, Sendable {
    package struct Open: Codable, Equatable, Sendable {
        package var callId: String
        package var title: String
        package var actions: [BridgeEvent.DialogAction]
    }

    package enum State: Equatable, Sendable {
        /// Next: `open` on `nativeDialog.present` with the capability.
        case closed
        /// Next: `closed` on a choice, a dismissal, an account switch or teardown.
        case open(Open)
    }

    private var state: State = .closed
    /// Dialogs presented so far: feeds server-made call ids (H27).
    package private(set) var counter = 0

    package init() {}

    /// `nil` when no dialog is open.
    package var open: Open? {
        switch state {
        case .closed: return nil
        case let .open(open): return open
        }
    }

    /// Whether `actionId` is one the open dialog offers (`true` with none open: there is
    /// nothing to refuse).
    package func offers(_ actionId: String) -> Bool {
        switch state {
        case .closed: return true
        case let .open(open): return open.actions.contains { $0.actionId == actionId }
        }
    }

    /// H27: `nativeDialog.present` answers `{pending: callId}` (its call id made from
    /// `sessionId`), `{type: "busy"}` while one is open, or `{type: "unavailable"}` (ignored)
    /// without the capability.
    mutating func presentRequested(title: String, actions: [BridgeEvent.DialogAction], advertised: Bool,
                                   sessionId: String) -> [Effect] {
        guard advertised else { return [.ignored(.capabilityNotAdvertised), .answer(["type": "unavailable"])] }
        switch state {
        case .open:
            return [.answer(["type": "busy"])]
        case .closed:
            counter += 1
            let callId = RequestIdFactory.uuidV5(name: "\(sessionId)/dialog/\(counter)")
            state = .open(Open(callId: callId, title: title, actions: actions))
            return [.answer(["pending": .string(callId)])]
        }
    }

    /// H27: the user chose an action (one it `offers`: the session refuses any other first).
    /// Ignored (`noDialog`) with none open.
    mutating func actionChosen(_ actionId: String) -> [Effect] {
        switch state {
        case .closed:
            return [.ignored(.noDialog)]
        case let .open(open):
            precondition(offers(actionId), "the session refuses an action the dialog does not offer")
            state = .closed
            return [Self.resolved(open, ["type": "action", "actionId": .string(actionId)])]
        }
    }

    /// H27: the user dismissed it; ignored (`noDialog`) with none open.
    mutating func dismissedByUser() -> [Effect] {
        switch state {
        case .closed: return [.ignored(.noDialog)]
        case .open: return dismissedByHost()
        }
    }

    /// H19, H20: an account switch or teardown dismisses an open dialog.
    mutating func dismissedByHost() -> [Effect] {
        switch state {
        case .closed:
            return []
        case let .open(open):
            state = .closed
            return [Self.resolved(open, ["type": "dismissed"])]
        }
    }

    private static func resolved(_ open: Open, _ value: JSON) -> Effect {
        .resolution(type: "nativeDialog.present", callId: open.callId, value: value)
    }
}

extension NativeDialog {
    init(_ snapshot: SessionSnapshot.Dialog, counter: Int) {
        if let open = snapshot.open { state = .open(open) }
        self.counter = counter
    }

    var snapshot: SessionSnapshot.Dialog { SessionSnapshot.Dialog(open: open) }
}

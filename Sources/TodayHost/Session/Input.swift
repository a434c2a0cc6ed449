/// Everything a caller can do to a session, typed (API: gestures, lifecycle, web-events,
/// commands, clock).
package enum Input: Equatable, Sendable {
    case gesture(Gesture)
    case lifecycle(Lifecycle)
    /// A Web → native bridge message exactly as Web emitted it; parsed at the boundary (H21).
    case webEvent(JSON)
    case clock(ClockMove)
    /// A native → Web command (H28).
    case command(Command)
    /// H20, given as the lifecycle input `{"type":"teardown"}`.
    case teardown

    /// What the `input` timeline entry records of it.
    package var json: JSON {
        switch self {
        case let .gesture(gesture): return gesture.json
        case let .lifecycle(lifecycle): return lifecycle.json
        case let .webEvent(message): return message
        case let .clock(move): return move.json
        case let .command(command): return command.json
        case .teardown: return ["type": "teardown"]
        }
    }

    /// Which endpoint (and `steps` key) carries it: the `via` of its `input` entry, so an export
    /// can replay it.
    package var channel: String {
        switch self {
        case .gesture: return "gesture"
        case .lifecycle: return "lifecycle"
        case .webEvent: return "webEvent"
        case .command: return "command"
        case .clock: return "clock"
        case .teardown: return "lifecycle"
        }
    }

    /// The `type` of its `input` timeline entry.
    package var typeName: String {
        switch self {
        case let .gesture(gesture): return gesture.typeName
        case let .lifecycle(lifecycle): return lifecycle.typeName
        case let .webEvent(message): return message["type"]?.stringValue ?? "webEvent"
        case .clock: return "clock"
        case let .command(command): return command.typeName
        case .teardown: return "teardown"
        }
    }
}

/// User gestures on the native side.
package enum Gesture: Equatable, Sendable {
    /// H10.
    case pull(requestId: String?)
    /// H26: a live widget was created, from the sheet or any other native entry point.
    case liveWidgetCreated(requestId: String?)
    /// H26: the user closed the creation sheet without creating.
    case liveWidgetCancelled
    /// H25: the user edits the chat draft.
    case chatEdit(text: String)
    /// H25: the user sends the chat draft.
    case chatSend
    /// H27: the user picks a dialog action.
    case dialogChoose(actionId: String)
    /// H27: the user dismisses the dialog.
    case dialogDismiss

    package var typeName: String {
        switch self {
        case .pull: return "pull"
        case .liveWidgetCreated: return "liveWidget.created"
        case .liveWidgetCancelled: return "liveWidget.cancelled"
        case .chatEdit: return "chat.edit"
        case .chatSend: return "chat.send"
        case .dialogChoose: return "dialog.choose"
        case .dialogDismiss: return "dialog.dismiss"
        }
    }

    var callerRequestId: String? {
        switch self {
        case let .pull(requestId), let .liveWidgetCreated(requestId): return requestId
        case .liveWidgetCancelled, .chatEdit, .chatSend, .dialogChoose, .dialogDismiss: return nil
        }
    }

    var json: JSON {
        var members: [(String, JSON)] = [("type", .string(typeName))]
        if let callerRequestId { members.append(("requestId", .string(callerRequestId))) }
        switch self {
        case let .chatEdit(text): members.append(("text", .string(text)))
        case let .dialogChoose(actionId): members.append(("actionId", .string(actionId)))
        case .pull, .liveWidgetCreated, .liveWidgetCancelled, .chatSend, .dialogDismiss: break
        }
        return .object(members)
    }
}

/// App lifecycle and WebView transitions.
package enum Lifecycle: Equatable, Sendable {
    case background
    case foreground(requestId: String?)
    case tabActivated(requestId: String?)
    case socketEvent(requestId: String?)
    case timerTick(requestId: String?)
    /// H17: a main-frame navigation not made by the host; `nil` reloads the session's own URL.
    case navigation(url: String?)
    /// H18; a recovery reload, if one follows, carries `requestId`.
    case webContentTerminated(requestId: String?)
    /// H19.
    case accountSwitch(uid: String)

    package var typeName: String {
        switch self {
        case .background: return "background"
        case .foreground: return "foreground"
        case .tabActivated: return "tabActivated"
        case .socketEvent: return "socketEvent"
        case .timerTick: return "timerTick"
        case .navigation: return "navigation"
        case .webContentTerminated: return "webContentTerminated"
        case .accountSwitch: return "accountSwitch"
        }
    }

    var callerRequestId: String? {
        switch self {
        case let .foreground(requestId), let .tabActivated(requestId), let .socketEvent(requestId),
            let .timerTick(requestId), let .webContentTerminated(requestId):
            return requestId
        case .background, .navigation, .accountSwitch:
            return nil
        }
    }

    var json: JSON {
        var members: [(String, JSON)] = [("type", .string(typeName))]
        if let callerRequestId { members.append(("requestId", .string(callerRequestId))) }
        switch self {
        case let .navigation(url?): members.append(("url", .string(url)))
        case let .accountSwitch(uid): members.append(("uid", .string(uid)))
        default: break
        }
        return .object(members)
    }
}

/// Native → Web commands (H28).
package enum Command: Equatable, Sendable {
    package enum ScrollBehavior: String, Codable, Sendable, CaseIterable {
        case auto, smooth
    }

    /// `todayPage.scrollToSection`; defaults `smooth` and `true` are filled in by the caller.
    case scrollToSection(batchId: String, behavior: ScrollBehavior, highlight: Bool)

    package var typeName: String {
        switch self {
        case .scrollToSection: return "todayPage.scrollToSection"
        }
    }

    /// Exactly what Web receives.
    package var payload: JSON {
        switch self {
        case let .scrollToSection(batchId, behavior, highlight):
            return ["type": .string(typeName), "schemaVersion": 1, "batchId": .string(batchId),
                    "behavior": .string(behavior.rawValue), "highlight": .bool(highlight)]
        }
    }

    var json: JSON { payload }
}

/// Moving a `virtual` session's clock (C2).
package enum ClockMove: Equatable, Sendable {
    case advanceBy(Millis)
    case advanceTo(Millis)
    case toNextTimer
    case runUntilIdle

    var json: JSON {
        switch self {
        case let .advanceBy(delta): return ["advanceMs": .int(delta)]
        case let .advanceTo(target): return ["toMs": .int(target)]
        case .toNextTimer: return ["toNextTimer": true]
        case .runUntilIdle: return ["runUntilIdle": true]
        }
    }
}

/// How an input went (API: `outcome` and `reason`).
package enum Outcome: Equatable, Sendable {
    case applied
    case ignored(IgnoreReason)
    case rejected(BridgeRejection)
    /// Applied, with a note (`runUntilIdle` stopped by its cap: `loopCap`).
    case appliedWithNote(String)

    package var name: String {
        switch self {
        case .applied, .appliedWithNote: return "applied"
        case .ignored: return "ignored"
        case .rejected: return "rejected"
        }
    }

    package var reason: String? {
        switch self {
        case .applied: return nil
        case let .appliedWithNote(note): return note
        case let .ignored(reason): return reason.rawValue
        case let .rejected(rejection): return rejection.reason
        }
    }
}

/// What applying one input produced.
package struct Applied: Equatable, Sendable {
    package var outcome: Outcome
    /// What the bridge call resolves to for Web (`null` for every `todayPage.*` event).
    package var resolution: JSON
    package var entries: [TimelineEntry]
    /// Ledger records created or changed, to be stored with the state.
    package var ledgerWrites: [RequestRecord]
}

/// What `HostSession.apply` did with an input: applied it, or read request records it was not
/// given (`LedgerRecords`) and applied nothing: the caller reads those and applies again.
package enum Application: Equatable, Sendable {
    case applied(Applied)
    case needs([String])
}

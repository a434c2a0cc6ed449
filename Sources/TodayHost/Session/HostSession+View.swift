/// The session view of the API, in its documented field order.
extension HostSession {
    public var view: JSON {
        [
            "id": .string(id), "uid": .string(uid), "label": .string(config.label),
            "status": isClosed ? "closed" : "active", "platform": .string(config.platform.rawValue),
            "route": .string(config.route), "language": .string(config.language),
            "loadingGate": .string(config.loadingGate.rawValue), "capabilities": .strings(injectedCapabilities),
            "version": .int(version),
            "clock": ["mode": .string(config.clock.rawValue), "nowMs": .int(nowMs)],
            "app": ["state": app.isForeground ? "foreground" : "background",
                    "backgroundedAtMs": app.backgroundedAtMs.map(JSON.int) ?? .null],
            "document": documentView,
            "header": ["state": .string(header.phase.rawValue), "requestId": .string(header.requestId)],
            "pull": ["state": .string(pull.phase.rawValue), "requestId": .string(pull.owner),
                     "lastOutcome": .string(pull.lastOutcome?.rawValue),
                     "lastGestureAtMs": manualWindow.lastGestureAtMs.map(JSON.int) ?? .null],
            "refresh": ["pending": .array(refresh.pending.map(\.json)),
                        "deadlineAtMs": refresh.deadline.map { .int($0.dueAtMs) } ?? .null,
                        "recoveryArmed": .bool(recovery.armed)],
            "chat": ["draft": .string(chat.draft), "pendingTriggerId": .string(chat.pendingTriggerId)],
            "liveWidgetSheet": .string(liveWidgetSheet.state.rawValue),
            "dialog": dialog.open.map { open in
                ["callId": .string(open.callId), "title": .string(open.title), "actions": .array(open.actions.map(\.json))]
            } ?? .null,
            "watchdogs": .array(watchdogs.map(\.json)),
            "timing": .object(config.timing.fields.map { ($0.0, .int($0.1)) }),
            "counts": ["timeline": .int(lastSeq), "violations": .int(violationCount)],
        ]
    }

    private var documentView: JSON {
        [
            "loadId": .int(document.loadId), "url": .string(document.url), "requestId": .string(document.requestId),
            "awaitingResult": .bool(document.awaitingResult),
            "state": .string(document.state.rawValue), "overlay": .string(document.overlay.state.rawValue),
            "cause": .string(document.cause.rawValue),
            "injected": ["platform": .string(config.platform.rawValue), "surface": "embedded",
                         "capabilities": .strings(injectedCapabilities)],
        ]
    }
}

extension SoftRefresh.PendingRequest {
    var json: JSON {
        ["requestId": .string(requestId), "reason": .string(reason?.rawValue), "requestedAtMs": .int(requestedAtMs)]
    }
}

extension Watchdog {
    public var json: JSON {
        ["kind": .string(kind.rawValue), "requestId": .string(requestId), "dueAtMs": .int(dueAtMs)]
    }
}

extension SessionConfig {
    /// The creation input as the timeline records it, defaults filled in.
    public var json: JSON {
        var members: [(String, JSON)] = [
            ("uid", .string(uid)), ("label", .string(label)), ("language", .string(language)),
            ("platform", .string(platform.rawValue)), ("route", .string(route)),
            ("loadingGate", .string(loadingGate.rawValue)),
        ]
        members.append(("capabilities", capabilities.map(JSON.strings) ?? .null))
        members.append(("clock", .string(clock.rawValue)))
        members.append(("timing", .object(timing.fields.map { ($0.0, .int($0.1)) })))
        let base = analytics.properties(uid: uid).dropFirst()
        members.append(("analytics", .object(Array(base))))
        return .object(members)
    }
}

/// One line of a session's history (API: timeline entries).
package struct TimelineEntry: Equatable, Sendable {
    package enum Kind: String, Codable, Sendable, CaseIterable {
        case input, bridge, emit, navigation, request, header, pull, overlay, watchdog, analytics, resolution,
            violation,
            /// A kept replay's last entry: the verdict on the host trace it replays.
            verdict
    }

    package var seq: Int
    package var atMs: Millis
    package var kind: Kind
    /// The input, event, payload or timer the entry is about.
    package var type: String
    package var requestId: String?
    /// The rule that made the entry (docs/RULES.md); `nil` for an input or event no rule judged
    /// (entries stored before rules were named have none either).
    package var rule: Rule?
    package var data: JSON

    package init(seq: Int, atMs: Millis, kind: Kind, type: String, requestId: String?, rule: Rule? = nil, data: JSON) {
        self.seq = seq
        self.atMs = atMs
        self.kind = kind
        self.type = type
        self.requestId = requestId
        self.rule = rule
        self.data = data
    }

    /// `rule` is there only when a rule made the entry.
    package var json: JSON {
        var members: [(String, JSON)] = [
            ("seq", .int(seq)), ("atMs", .int(atMs)), ("kind", .string(kind.rawValue)), ("type", .string(type)),
            ("requestId", .string(requestId)),
        ]
        if let rule { members.append(("rule", .string(rule.rawValue))) }
        members.append(("data", data))
        return .object(members)
    }
}

extension Effect {
    /// The entry this effect becomes, before the session numbers it; `nil` for a command.
    var entryParts: (kind: TimelineEntry.Kind, type: String, requestId: String?, rule: Rule?, data: JSON)? {
        switch self {
        case let .emit(type, requestId, payload, rule):
            return (.emit, type, requestId, rule, ["payload": payload])
        case let .navigation(loadId, url, cause, requestId):
            return (.navigation, cause.rawValue, requestId, cause.rule,
                    ["loadId": .int(loadId), "url": .string(url), "cause": .string(cause.rawValue)])
        case let .requestSettled(requestId, outcome, reason, rule):
            var data: [(String, JSON)] = [("outcome", .string(outcome.rawValue))]
            if let reason { data.append(("reason", .string(reason.rawValue))) }
            return (.request, outcome.rawValue, requestId, rule, .object(data))
        case let .header(from, to, requestId, rule):
            return (.header, to.rawValue, requestId, rule, ["from": .string(from.rawValue), "to": .string(to.rawValue)])
        case let .pull(state, outcome, requestId, rule):
            var data: [(String, JSON)] = [("state", .string(state.rawValue))]
            if let outcome { data.append(("outcome", .string(outcome.rawValue))) }
            return (.pull, state.rawValue, requestId, rule, .object(data))
        case let .overlay(from, to):
            return (.overlay, to.rawValue, nil, to.rule, ["from": .string(from.rawValue), "to": .string(to.rawValue)])
        case let .watchdog(kind, requestId, lateMs):
            var data: [(String, JSON)] = [("kind", .string(kind.rawValue))]
            if let lateMs { data.append(("lateMs", .int(lateMs))) }
            return (.watchdog, kind.rawValue, requestId, kind.rule, .object(data))
        case let .analytics(event, properties):
            return (.analytics, event, nil, .h24, ["event": .string(event), "properties": properties])
        case let .resolution(type, callId, value):
            return (.resolution, type, nil, .h27, ["callId": .string(callId), "value": value])
        case let .violation(code, detail, requestId):
            return (.violation, code, requestId, Rule(rawValue: code), ["code": .string(code), "detail": .string(detail)])
        case .ignored, .answer, .hostAnalytics, .requestSoftRefresh, .reload, .feedbackSettled, .feedbackTimedOut, .endPull:
            return nil
        }
    }
}

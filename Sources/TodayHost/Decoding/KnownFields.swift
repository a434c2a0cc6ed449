/// How a control-plane body's unknown fields are treated (API: Conventions, as Kubernetes'
/// `fieldValidation`): a typo such as `requestID` must not let a test pass for the wrong reason.
package enum FieldValidation: String, CaseIterable, Sendable {
    /// Applied as if the field were absent; the answer carries `warnings`.
    case warn = "Warn"
    /// Refused: `400 invalid_field` naming the field, nothing applied.
    case strict = "Strict"
    /// Dropped silently.
    case ignore = "Ignore"

    /// A mode by its name in any case (`strict`, `Strict`, `STRICT`).
    package init?(name: String) {
        guard let mode = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else { return nil }
        self = mode
    }

    package static let choices = allCases.map(\.rawValue).joined(separator: ", ")
}

/// One unknown field: where it is (`timing.pullWatchdogMS`, `steps[3].gesture.requestID`) and
/// what to do about it.
package struct FieldWarning: Equatable, Sendable {
    package var field: String
    package var detail: String

    package init(field: String, detail: String) {
        self.field = field
        self.detail = detail
    }

    package var json: JSON { ["field": .string(field), "detail": .string(detail)] }

    /// The same warning one level further in (`gesture.` + field).
    package func within(_ prefix: String) -> FieldWarning {
        FieldWarning(field: prefix + field, detail: detail)
    }
}

/// The fields each control-plane body takes, per input `type`: what `InputDecoding` reads, so
/// a field it would drop is named instead (`requestId` on `background` is unknown there).
/// Bridge messages are Web's own and are not checked (H21).
package enum ControlBody: Sendable {
    case creation, gesture, lifecycle, command, clock, fork

    /// The fields of a body of this kind with this `type` (`nil` for a type the endpoint does
    /// not know: that body is refused as `unknown_input` before its fields matter).
    package func fields(type: String?) -> [String]? {
        switch self {
        case .creation:
            return ["id", "uid", "label", "language", "platform", "route", "loadingGate", "capabilities", "clock",
                    "timing", "analytics", "ttlMs"]
        case .clock: return ["advanceMs", "toMs", "toNextTimer", "runUntilIdle"]
        case .fork: return ["id"]
        case .gesture:
            switch type {
            case "pull", "liveWidget.created": return ["type", "requestId"]
            case "liveWidget.cancelled", "chat.send", "dialog.dismiss": return ["type"]
            case "chat.edit": return ["type", "text"]
            case "dialog.choose": return ["type", "actionId"]
            default: return nil
            }
        case .lifecycle:
            switch type {
            case "foreground", "tabActivated", "socketEvent", "timerTick", "webContentTerminated": return ["type", "requestId"]
            case "background", "teardown": return ["type"]
            case "navigation": return ["type", "url"]
            case "accountSwitch": return ["type", "uid"]
            default: return nil
            }
        case .command:
            switch type {
            case "todayPage.scrollToSection": return ["type", "schemaVersion", "batchId", "behavior", "highlight"]
            default: return nil
            }
        }
    }

    /// The input types this endpoint knows, in the API's order (`nil` for a body without a `type`).
    package var types: [String]? {
        switch self {
        case .gesture: ["pull", "liveWidget.created", "liveWidget.cancelled", "chat.edit", "chat.send", "dialog.choose", "dialog.dismiss"]
        case .lifecycle: ["background", "foreground", "tabActivated", "socketEvent", "timerTick", "navigation",
                          "webContentTerminated", "accountSwitch", "teardown"]
        case .command: ["todayPage.scrollToSection"]
        case .creation, .clock, .fork: nil
        }
    }

    /// The refusal of a `type` this endpoint does not know: it names the type meant (the same
    /// did-you-mean as an unknown field), else every type the endpoint takes.
    package func unknownType(_ type: String) -> InputProblem {
        let known = types ?? []
        let noun = self == .command ? "command" : self == .lifecycle ? "lifecycle" : "gesture"
        let hint = Suggestion.nearest(to: type, among: known).map { "did you mean \($0)?" }
            ?? "the \(noun) types are \(known.joined(separator: ", "))"
        return .unknownInput("unknown \(noun) type \"\(type)\"; \(hint)")
    }

    /// The unknown fields of `body` (a JSON object; anything else has none to name), in the
    /// body's order. Callers list a bounded number of them.
    package func unknownFields(in body: JSON) -> [FieldWarning] {
        let type = body["type"]?.stringValue
        var warnings = Self.check(body, known: fields(type: type), path: "", owner: type.map { "\($0) takes only" } ?? "this body takes")
        if self == .creation {
            warnings += Self.check(body["timing"], known: Timing.fieldKeyPaths.map(\.0), path: "timing.", owner: "timing takes")
            // Nothing inside `analytics.ctx` is checked: it is the app's own context.
            warnings += Self.check(body["analytics"], known: ["did", "sid", "client_plat", "ctx"], path: "analytics.",
                                  owner: "analytics takes")
        }
        return warnings
    }

    /// `owner` opens the list of known fields when no one of them is near (`pull takes only`).
    private static func check(_ value: JSON?, known: [String]?, path: String, owner: String) -> [FieldWarning] {
        guard let known, case let .object(members)? = value else { return [] }
        return members.filter { !known.contains($0.0) }.map { key, _ in
            let hint = suggestion(for: key, among: known).map { "did you mean \($0)?" }
                ?? "\(owner) \(known.joined(separator: ", "))"
            return FieldWarning(field: path + key, detail: "unknown field; \(hint)")
        }
    }

    static func suggestion(for key: String, among known: [String]) -> String? {
        Suggestion.nearest(to: key, among: known)
    }
}

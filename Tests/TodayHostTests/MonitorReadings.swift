@testable import TodayHost

/// Readings and builders for the H24–H28 bridge-surface tests and the M1–M9 monitor tests.
extension TimelineEntry {
    /// A `violation` entry as `code(requestId)` (`-` when it names no request), when its shape is
    /// the documented one: `type` is the code, `data` is exactly `{code, detail}` and `detail`
    /// starts with the code. Anything else reads as the raw entry, so a failure shows it.
    var violationLine: String {
        let detail = data["detail"]?.stringValue ?? ""
        let wellFormed = kind == .violation && data == ["code": .string(type), "detail": .string(detail)]
            && detail.hasPrefix("\(type): ") && detail.count > type.count + 2
        guard wellFormed else { return "malformed \(json.serialized())" }
        return "\(type)(\(requestId ?? "-"))"
    }

    /// What an entry says without its place in the timeline (`seq` moves with every violation).
    var content: JSON {
        ["atMs": .int(atMs), "kind": .string(kind.rawValue), "type": .string(type), "requestId": .string(requestId),
         "data": data]
    }
}

extension SessionRunner {
    /// Every violation so far, as `code(requestId)`.
    var violations: [String] { entries(.violation).map(\.violationLine) }

    /// `counts.violations` of the session view.
    var viewViolationCount: JSON? { session.view["counts"]?["violations"] }

    /// The session view without `counts` (the timeline count moves with every violation entry).
    var viewWithoutCounts: JSON {
        guard case let .object(members) = session.view else { return session.view }
        return .object(members.filter { $0.0 != "counts" })
    }

    /// The timeline after `seq` without violation entries, each entry without its `seq`.
    func behaviour(after seq: Int) -> [JSON] {
        timeline.filter { $0.seq > seq && $0.kind != .violation }.map(\.content)
    }
}

extension Applied {
    /// The violations this input recorded, as `code(requestId)`.
    var violations: [String] { entries(.violation).map(\.violationLine) }

    /// This input's entries without violations, each without its `seq`.
    var behaviour: [JSON] { entries.filter { $0.kind != .violation }.map(\.content) }
}

extension Web {
    static func track(_ members: [(String, JSON)]) -> Input {
        message([("type", "track")] + members)
    }

    /// `webView.navigationAction` to `url` (H25).
    static func link(_ url: String) -> Input {
        message([("type", "webView.navigationAction"), ("url", .string(url))])
    }

    static var presentLiveWidgetCreation: Input {
        message([("type", "liveWidgetCreation.present")])
    }

    /// `nativeDialog.present` asking to confirm a deletion (H27).
    static var presentDeleteDialog: Input {
        message([("type", "nativeDialog.present"), ("title", "Delete this widget?"),
                 ("actions", [["actionId": "delete", "title": "Delete", "role": "destructive"],
                              ["actionId": "keep", "title": "Keep"]])])
    }
}

/// Where violation entries stand in the timeline (docs/RULES.md#the-contract-monitor): each
/// follows the entry it judges, and several from one input come in rule order; the monitor tests
/// that read them in place use this.
extension Applied {
    /// Every entry this input appended, violations included, as `kind:type(requestId)`; a
    /// violation reads as `violation:` and its `violationLine`, so a malformed one shows.
    var placed: [String] {
        entries.map { entry in
            entry.kind == .violation ? "violation:\(entry.violationLine)" : "\(entry.line)(\(entry.requestId ?? "-"))"
        }
    }
}

@testable import TodayHost

/// A pending timer as a scenario expects it: `Due(.pullWatchdog, "pull-1", 13000)`.
struct Due: Equatable, CustomStringConvertible {
    var kind: TimerKind
    var requestId: String?
    var dueAtMs: Millis

    init(_ kind: TimerKind, _ requestId: String?, _ dueAtMs: Millis) {
        self.kind = kind
        self.requestId = requestId
        self.dueAtMs = dueAtMs
    }

    var description: String { "\(kind.rawValue)(\(requestId ?? "-")) @\(dueAtMs)" }
}

extension Web {
    /// A `refreshStarted` an old or broken Web might send: wrong schema, no presentation.
    static func malformedStarted(_ requestId: String) -> Input {
        .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 2, "requestId": .string(requestId)])
    }
}

extension SessionRunner {
    /// The session's pending timers, in due order (C3).
    var dueTimers: [Due] { session.watchdogs.map { Due($0.kind, $0.requestId, $0.dueAtMs) } }

    /// Every `header` entry as `from→to requestId @atMs`.
    var headerTrail: [String] {
        entries(.header).map { entry in
            "\(entry.data["from"]!.stringValue!)→\(entry.data["to"]!.stringValue!) \(entry.requestId ?? "-") @\(entry.atMs)"
        }
    }

    /// Every `pull` entry as `state requestId[ outcome] @atMs`.
    var pullTrail: [String] {
        entries(.pull).map { entry in
            let outcome = entry.data["outcome"]?.stringValue.map { " " + $0 } ?? ""
            return "\(entry.type) \(entry.requestId ?? "-")\(outcome) @\(entry.atMs)"
        }
    }

    /// Every `request` entry as `requestId outcome @atMs`.
    var requestTrail: [String] {
        entries(.request).map { "\($0.requestId ?? "-") \($0.type) @\($0.atMs)" }
    }

    /// Every `navigation` entry as `cause url @atMs`.
    var navigationTrail: [String] {
        entries(.navigation).map { "\($0.type) \($0.data["url"]!.stringValue!) @\($0.atMs)" }
    }
}

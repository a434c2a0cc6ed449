/// A numbered rule of the host's behaviour (docs/RULES.md): C1–C4 the clock, H1–H28 the host,
/// M1–M9 the monitor of Web's side. Every timeline entry a rule made names it (`rule`), and a
/// host trace's divergence names the rule it breaks.
package enum Rule: String, Sendable, Equatable, CaseIterable {
    case c1 = "C1", c2 = "C2", c3 = "C3", c4 = "C4"
    case h1 = "H1", h2 = "H2", h3 = "H3", h4 = "H4", h5 = "H5", h6 = "H6", h7 = "H7", h8 = "H8", h9 = "H9",
        h10 = "H10", h11 = "H11", h12 = "H12", h13 = "H13", h14 = "H14", h15 = "H15", h16 = "H16", h17 = "H17",
        h18 = "H18", h19 = "H19", h20 = "H20", h21 = "H21", h22 = "H22", h23 = "H23", h24 = "H24", h25 = "H25",
        h26 = "H26", h27 = "H27", h28 = "H28"
    case m1 = "M1", m2 = "M2", m3 = "M3", m4 = "M4", m5 = "M5", m6 = "M6", m7 = "M7", m8 = "M8", m9 = "M9"
}

extension RefreshReason? {
    /// The rule that asks Web for a soft refresh with this reason: a pull (H10), a return to the
    /// foreground (H15), a created live widget (H26), a tab, socket or timer (H16).
    var requestRule: Rule {
        switch self {
        case .userPull: return .h10
        case .appForeground: return .h15
        case .liveWidgetCreated: return .h26
        case .tabActivated, nil: return .h16
        }
    }
}

extension LoadCause {
    /// The rule that loads a document for this cause.
    var rule: Rule {
        switch self {
        case .initial: return .h3
        case .recovery: return .h9
        case .termination: return .h18
        case .manualRepeat: return .h10
        case .accountSwitch: return .h19
        case .navigation: return .h17
        }
    }
}

extension OverlayState {
    /// Every load shows the overlay (H3); the loading gate hides it (H23).
    var rule: Rule { self == .visible ? .h3 : .h23 }
}

extension TimerKind {
    /// The rule whose timer this is.
    var rule: Rule {
        switch self {
        case .softRefreshDeadline: return .h5
        case .pullWatchdog: return .h11
        case .headerWatchdog, .headerHide: return .h13
        }
    }
}

extension IgnoreReason {
    /// The rule that ignores an input for this reason (`nil`: none names it).
    var rule: Rule? {
        switch self {
        case .staleResult: return .h8
        case .staleRender: return .h22
        case .ownerNotWeb, .alreadyReleased: return .h23
        case .untrustedLink, .noDraft: return .h25
        case .noSheet: return .h26
        case .noDialog: return .h27
        case .alreadyBackground, .alreadyForeground: return .h15
        case .noTimer: return .c2
        case .unknownEvent: return .h21
        // Which capability decides: the bridge entry's type (`Outcome.rule(forType:)`).
        case .capabilityNotAdvertised: return nil
        }
    }
}

extension Outcome {
    /// The rule behind an input's or a bridge event's outcome, where one judged it: a rejected
    /// event H21, an ignored one the rule of its reason, a `runUntilIdle` stopped by its cap C2.
    func rule(forType type: String) -> Rule? {
        switch self {
        case .applied: return nil
        case .appliedWithNote: return .c2
        case .rejected: return .h21
        case .ignored(.capabilityNotAdvertised):
            switch type {
            case "todayPage.refreshStarted": return .h12
            case "liveWidgetCreation.present": return .h26
            case "nativeDialog.present": return .h27
            default: return nil
            }
        case let .ignored(reason): return reason.rule
        }
    }
}

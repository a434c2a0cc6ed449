/// The words of the protocol that several coordinators share.

/// Why a native soft request was made (H4). `nil` on a request means the legacy silent path.
package enum RefreshReason: String, Codable, Sendable, Equatable {
    case userPull = "user_pull"
    case appForeground = "app_foreground"
    case liveWidgetCreated = "live_widget_created"
    case tabActivated = "tab_activated"
}

/// How a native request or a spinner ended (API: `pull.lastOutcome`, a request's `outcome`).
package enum RequestOutcome: String, Codable, Sendable, Equatable {
    case succeeded, failed, cancelled, unsupported, unknown, timedOut
}

/// The `status` of a `todayPage.refreshResult`: any string is accepted on the wire (H7).
package enum ResultStatus: Equatable, Sendable {
    case succeeded, failed, cancelled, unsupported
    case other(String)

    package init(_ text: String) {
        switch text {
        case "succeeded": self = .succeeded
        case "failed": self = .failed
        case "cancelled": self = .cancelled
        case "unsupported": self = .unsupported
        default: self = .other(text)
        }
    }

    package var outcome: RequestOutcome {
        switch self {
        case .succeeded: return .succeeded
        case .failed: return .failed
        case .cancelled: return .cancelled
        case .unsupported: return .unsupported
        case .other: return .unknown
        }
    }

    /// `failed`, `cancelled` and `unsupported` count as a failure for the recovery budget (H7, H9).
    package var isFailure: Bool {
        switch self {
        case .failed, .cancelled, .unsupported: return true
        case .succeeded, .other: return false
        }
    }
}

/// Why a document was loaded (API: `document.cause`).
package enum LoadCause: String, Codable, Sendable, Equatable {
    case initial, recovery, manualRepeat, termination, accountSwitch, navigation
}

package enum DocumentState: String, Codable, Sendable, Equatable {
    case loading, rendered, failed, terminated
}

package enum OverlayState: String, Codable, Sendable, Equatable {
    case visible, hidden
}

package enum Platform: String, Codable, Sendable, Equatable, CaseIterable {
    case ios, android
}

/// What hides the native loading overlay (H23).
package enum LoadingGate: String, Codable, Sendable, Equatable, CaseIterable {
    /// A host that adopted `webView.loadingPresentation`.
    case presentation
    /// A host that has not: render events hide the overlay.
    case render
}

package enum ClockMode: String, Codable, Sendable, Equatable, CaseIterable {
    case virtual, wall
}

package enum Capability {
    package static let revalidateFeedback = "today_page_revalidate_feedback.v1"
    package static let liveWidgetCreation = "live_widget_creation.v1"
    package static let nativeDialog = "native_dialog.v1"
}

/// A session's state as plain values: the one form it is stored in, and what `HostSession` and
/// each of its coordinators are made from and give back. Its binary form (`StateCodable`) is
/// the store's; its `Codable` JSON form is the first schema's, whose keys it keeps so that rows
/// written then still load. A coordinator's own state may change shape; this one changes only
/// with a new `StateFormat`.
package struct SessionSnapshot: Codable, Equatable, Sendable {
    var id: String
    var config: SessionConfig
    var uid: String
    var isClosed: Bool
    var version: Int, nowMs: Millis, lastSeq: Int, step: Int
    var requestCounter: Int, violationCount: Int
    var injectedCapabilities: [String]
    // The coordinators', in the order they are stored.
    var app: App, document: Document, header: Header, pull: Pull, manualWindow: ManualWindow
    var refresh: Refresh, recovery: Recovery, chat: Chat, liveWidgetSheet: Sheet, dialog: Dialog
    var dialogCounter: Int

    /// The foreground tracker (H15).
    package struct App: Codable, Equatable, Sendable {
        var state: State

        enum State: Codable, Equatable, Sendable {
            case foreground
            case background(sinceMs: Millis)
        }
    }

    /// The document loader (H1–H3, H18, H22) and its overlay (H23).
    package struct Document: Codable, Equatable, Sendable {
        var loadId: Int
        var url: String
        var requestId: String?
        var awaitingResult: Bool
        var state: DocumentState, cause: LoadCause
        var renderedBatch: Bool, contentVisible: Bool
        var overlay: Overlay
    }

    package struct Overlay: Codable, Equatable, Sendable {
        var state: OverlayState
        var releasedByWeb: Bool
    }

    /// The header renderer (H12–H14).
    package struct Header: Codable, Equatable, Sendable {
        var state: State

        enum State: Codable, Equatable, Sendable {
            case hidden
            case refreshing(requestId: String, watchdog: Deadline)
            case updated(requestId: String, hide: Deadline)
            case failed(requestId: String, hide: Deadline)
        }
    }

    /// The pull spinner (H10, H11).
    package struct Pull: Codable, Equatable, Sendable {
        var state: State
        var lastOutcome: RequestOutcome?

        enum State: Codable, Equatable, Sendable {
            case idle
            case refreshing(requestId: String, watchdog: Deadline)
        }
    }

    /// The window of repeated pulls (H10).
    package struct ManualWindow: Codable, Equatable, Sendable {
        var lastGestureAtMs: Millis?
    }

    /// The pending soft requests and their deadline (H4–H7).
    package struct Refresh: Codable, Equatable, Sendable {
        var pending: [SoftRefresh.PendingRequest]
        var deadline: Deadline?
    }

    /// The recovery budget (H9), stored as `{"armed": true}` since before it had a state.
    package struct Recovery: Codable, Equatable, Sendable {
        var armed: Bool
    }

    /// The chat draft and its attribution (H25).
    package struct Chat: Codable, Equatable, Sendable {
        var draft: String?
        var pendingTriggerId: String?
        var attribution: [ChatAttribution.Parameter]
    }

    /// The Live Widget creation sheet (H26).
    package struct Sheet: Codable, Equatable, Sendable {
        var state: LiveWidgetSheet.State
    }

    /// The native dialog (H27).
    package struct Dialog: Codable, Equatable, Sendable {
        var open: NativeDialog.Open?
    }
}

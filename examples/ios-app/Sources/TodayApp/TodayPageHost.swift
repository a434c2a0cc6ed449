import Foundation
import TodayTraceRecorder

/// The app's Today Page host, cut down to what this example needs: the loading overlay Web
/// releases, and the pull spinner with its request to Web, which Web's result ends. Isolated to
/// the main actor, as a UIKit host is; it records what it receives and does when it has a
/// recorder (a test build), and every recording call is one `try`.
@MainActor
public final class TodayPageHost {
    public private(set) var spinner = PullSpinner()
    public private(set) var overlayVisible = true
    /// The id of the request the spinner waits for: what the host sent Web.
    public private(set) var pullRequestId: String?
    private let recorder: TodayPageTraceRecorder?

    public init(uid: String, recorder: TodayPageTraceRecorder?) throws {
        self.recorder = recorder
        try recorder?.navigated(cause: "initial", url: "https://today.example.com/embed/feeds/v1?uid=\(uid)&language=en")
    }

    /// The pull-to-refresh gesture: the spinner starts and Web is asked to revalidate (H10).
    public func userPulled() throws {
        try recorder?.gesture(["type": "pull"])
        guard !spinner.isRefreshing else { return }
        let id = UUID().uuidString
        spinner.isRefreshing = true
        pullRequestId = id
        try recorder?.pull("refreshing", requestId: id)
        try recorder?.emitted(["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": id, "reason": "user_pull"])
    }

    /// A bridge message from Web, as the WKScriptMessageHandler receives it.
    public func webPosted(_ message: [String: Any]) throws {
        try recorder?.webEvent(message)
        switch message["type"] as? String {
        case "webView.loadingPresentation" where message["owner"] as? String == "web" && overlayVisible:
            overlayVisible = false
            try recorder?.overlay("hidden")
        case "todayPage.refreshResult":
            guard let id = message["requestId"] as? String, id == pullRequestId else { return }
            spinner.isRefreshing = false
            pullRequestId = nil
            try recorder?.pull("idle", requestId: id, outcome: message["status"] as? String ?? "unknown")
        default:
            break
        }
    }
}

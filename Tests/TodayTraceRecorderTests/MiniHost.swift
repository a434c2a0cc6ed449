import Foundation
import TodayTraceRecorder

/// A Today Page host written the way an app team writes one, separately from todaysim (it
/// uses none of todaysim's code, only the recorder an app copies): a refresh coordinator with
/// its 5 s deadline and one-shot recovery reload, a pull spinner with its 12 s watchdog, a
/// header renderer, a foreground tracker and a loading overlay, each recording what it does.
/// `Bugs` plants the mistakes the iOS guide's checklist guards against. The clock is the
/// test's: `advance(to:)` fires what falls due, in due order. It records only plain JSON, so a
/// line the recorder refuses is a bug of this test host, and `try!` stops the test there.
final class MiniHost {
    struct Bugs: OptionSet {
        let rawValue: Int
        /// Revalidates after 4 s away, not 5 (H15).
        static let foregroundAfter4s = Bugs(rawValue: 1 << 0)
        /// Any result ends the spinner, even one for an id it does not own (H11).
        static let staleResultEndsSpinner = Bugs(rawValue: 1 << 1)
        /// A navigation leaves the header as it is (H14).
        static let headerKeptOnNavigation = Bugs(rawValue: 1 << 2)
        /// A `cancelled` result shows `updated` (H13).
        static let cancelledShownAsUpdated = Bugs(rawValue: 1 << 3)
        /// A late failed result for a request already timed out reloads again (H9).
        static let reloadOnLateResult = Bugs(rawValue: 1 << 4)
        /// The spinner's watchdog is 20 s, not 12 (H11).
        static let spinnerPastWatchdog = Bugs(rawValue: 1 << 5)
        /// A pull shows the header too, with no `refreshStarted` (H10).
        static let headerMirrorsPull = Bugs(rawValue: 1 << 6)
    }

    let recorder: TodayPageTraceRecorder
    let bugs: Bugs
    private(set) var now: Int64 = 0

    private let uid = "u1"
    private var pending: [(id: String, reason: String)] = []
    private var deadline: Int64?
    private var recoveryArmed = true
    private var spinner: (id: String, watchdog: Int64)?
    private var header: (state: String, id: String, due: Int64)?
    private var documentOwnedId: String?
    private var backgroundSince: Int64?
    private var lastPullAt: Int64?
    private var released = false

    /// How far from 5 s the real deadline fires (a host's timer jitter).
    let deadlineOffsetMs: Int64

    /// `platform`: what the creation line says (`ios`, `android`): one host plays either.
    init(url: URL, bugs: Bugs = [], deadlineOffsetMs: Int64 = 0, platform: String = "ios") throws {
        self.bugs = bugs
        self.deadlineOffsetMs = deadlineOffsetMs
        let box = Clock()
        clockBox = box
        recorder = try TodayPageTraceRecorder(url: url, creation: ["uid": "u1", "platform": platform], host: "MiniHost \(platform)",
                                              clock: { box.ms })
        load(cause: "initial", requestId: nil)
        analytics("app_sess_start")
        analytics("page_view")
    }

    private final class Clock { var ms: Int64 = 0 }
    private let clockBox: Clock

    // MARK: Time

    /// Moves the clock, firing each timer due on the way at its due time.
    func advance(to target: Int64) {
        while let (due, fire) = nextTimer(), due <= target {
            setClock(due)
            fire()
        }
        setClock(target)
    }

    private func setClock(_ ms: Int64) {
        now = max(now, ms)
        clockBox.ms = now
    }

    private func nextTimer() -> (Int64, () -> Void)? {
        var timers: [(Int64, () -> Void)] = []
        if let deadline { timers.append((deadline, { [self] in deadlineExpired() })) }
        if let spinner { timers.append((spinner.watchdog, { [self] in endSpinner("timedOut") })) }
        if let header { timers.append((header.due, { [self] in clearHeader() })) }
        return timers.min { $0.0 < $1.0 }
    }

    // MARK: Inputs (what the app's bridge and UI hand the host)

    func pull() {
        try! recorder.gesture(["type": "pull"])
        recoveryArmed = true
        let id = UUID().uuidString
        let repeats = lastPullAt.map { now - $0 <= 10_000 } ?? false
        lastPullAt = now
        spinner = (id, now + (bugs.contains(.spinnerPastWatchdog) ? 20_000 : 12_000))
        try! recorder.pull("refreshing", requestId: id)
        if bugs.contains(.headerMirrorsPull) { showHeader("refreshing", id, due: now + 12_000) }
        if repeats {
            reload(cause: "manualRepeat", requestId: id)
        } else {
            request("user_pull", id: id)
        }
    }

    func background() {
        try! recorder.lifecycle(["type": "background"])
        guard backgroundSince == nil else { return }
        backgroundSince = now
        visibility(false)
        analytics("page_end")
    }

    func foreground() {
        try! recorder.lifecycle(["type": "foreground"])
        guard let since = backgroundSince else { return }
        backgroundSince = nil
        visibility(true)
        analytics("page_view")
        if now - since >= (bugs.contains(.foregroundAfter4s) ? 4_000 : 5_000) { request("app_foreground", id: UUID().uuidString) }
    }

    func tabActivated() {
        try! recorder.lifecycle(["type": "tabActivated"])
        request("tab_activated", id: UUID().uuidString)
    }

    func navigation() {
        try! recorder.lifecycle(["type": "navigation"])
        navigate(cause: "navigation", requestId: nil)
        endSpinner("cancelled")
    }

    /// What Web posts over the bridge.
    func web(_ message: [String: Any]) {
        try! recorder.webEvent(message)
        switch message["type"] as? String {
        case "webView.loadingPresentation":
            guard message["owner"] as? String == "web", !released else { return }
            released = true
            try! recorder.overlay("hidden")
        case "todayPage.refreshStarted":
            guard let id = message["requestId"] as? String else { return }
            showHeader("refreshing", id, due: now + 12_000)
        case "todayPage.refreshResult":
            guard let id = message["requestId"] as? String, let status = message["status"] as? String else { return }
            result(id, status)
        default:
            break
        }
    }

    /// The pending id of the last native request (what Web would read from `refreshRequested`).
    var lastRequestId: String? { pending.last?.id }
    /// The id a host-made reload put in the URL.
    var reloadId: String? { documentOwnedId }
    var spinnerId: String? { spinner?.id }

    // MARK: The coordinators

    private func request(_ reason: String, id: String) {
        if pending.isEmpty { deadline = now + 5_000 + deadlineOffsetMs }
        pending.append((id, reason))
        try! recorder.emitted(["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": id, "reason": reason])
    }

    private func result(_ id: String, _ status: String) {
        var nativeOwned = false
        if let index = pending.firstIndex(where: { $0.id == id }) {
            pending.remove(at: index)
            if pending.isEmpty { deadline = nil }
            nativeOwned = true
        } else if documentOwnedId == id {
            documentOwnedId = nil
            nativeOwned = true
        } else if header?.id == id || spinner?.id == id {
            nativeOwned = false
        } else {
            // Stale: nobody waits for it.
            if bugs.contains(.staleResultEndsSpinner), spinner != nil { endSpinner(status) }
            if bugs.contains(.reloadOnLateResult), status == "failed" { reload(cause: "recovery", requestId: UUID().uuidString) }
            return
        }
        var reloads = false
        if nativeOwned {
            if status == "succeeded" {
                recoveryArmed = true
            } else if ["failed", "cancelled", "unsupported"].contains(status) {
                reloads = recoveryArmed
                recoveryArmed = false
            }
        }
        if reloads {
            reload(cause: "recovery", requestId: UUID().uuidString)
            return
        }
        if spinner?.id == id { endSpinner(status) }
        guard let shown = header, shown.state == "refreshing", shown.id == id else { return }
        switch status {
        case "succeeded": showHeader("updated", id, due: now + 1_000)
        case "failed": showHeader("failed", id, due: now + 1_000)
        case "cancelled" where bugs.contains(.cancelledShownAsUpdated): showHeader("updated", id, due: now + 1_000)
        default: clearHeader()
        }
    }

    private func deadlineExpired() {
        let expired = pending
        pending = []
        deadline = nil
        if recoveryArmed {
            recoveryArmed = false
            reload(cause: "recovery", requestId: UUID().uuidString)
            return
        }
        for request in expired {
            if spinner?.id == request.id { endSpinner("timedOut") }
            if header?.state == "refreshing", header?.id == request.id { clearHeader() }
        }
    }

    /// A reload the host makes: the spinner, if up, follows it with its watchdog.
    private func reload(cause: String, requestId: String) {
        navigate(cause: cause, requestId: requestId)
        if let up = spinner {
            spinner = (requestId, up.watchdog)
            try! recorder.pull("refreshing", requestId: requestId)
        }
    }

    private func navigate(cause: String, requestId: String?) {
        pending = []
        deadline = nil
        documentOwnedId = nil
        if !bugs.contains(.headerKeptOnNavigation) { clearHeader() }
        load(cause: cause, requestId: requestId)
    }

    private func load(cause: String, requestId: String?) {
        documentOwnedId = requestId
        released = false
        var url = "https://today.example.com/embed/feeds/v1?uid=\(uid)&language=en"
        if let requestId { url += "&requestId=\(requestId)" }
        try! recorder.navigated(cause: cause, url: url, requestId: requestId)
        try! recorder.overlayShownByLoad()
    }

    private func endSpinner(_ outcome: String) {
        guard let up = spinner else { return }
        spinner = nil
        let mapped = ["succeeded", "failed", "cancelled", "unsupported", "timedOut"].contains(outcome) ? outcome : "unknown"
        try! recorder.pull("idle", requestId: up.id, outcome: mapped)
    }

    private func showHeader(_ state: String, _ id: String, due: Int64) {
        header = (state, id, due)
        try! recorder.header(state, requestId: id)
    }

    private func clearHeader() {
        guard let shown = header else { return }
        header = nil
        try! recorder.header("hidden", requestId: shown.id)
    }

    private func visibility(_ visible: Bool) {
        for type in ["webView.visibilityWillChange", "webView.visibilityChanged"] {
            try! recorder.emitted(["type": type, "schemaVersion": 1, "visible": visible])
        }
    }

    private func analytics(_ event: String) {
        try! recorder.analytics(event: event, properties: ["uid": uid, "app_version": "5.12.0"])
    }
}

import Foundation

/// Records what an app's Today Page host receives and does as a todaysim host trace
/// (docs/TRACES.md), for `todaysim verify-host` to judge against the rules.
///
/// The package product `TodayTraceRecorder`, added to the app target (or this one file, copied
/// beside the bridge); it needs Foundation only. Create one
/// recorder per Today Page host (at the host's creation), call it where the host receives an
/// input and where it makes an output, and `close()` it when the test ends. Times come from a
/// monotonic clock (`ProcessInfo.systemUptime`), in milliseconds since the recorder was made.
/// Every call is one line, written at once; calls from several threads are serialized.
///
/// Where each call goes (docs/TRACES.md, "Recording in an app"):
/// - bridge dispatch (Web → native): `webEvent(_:)` with the message as Web posted it;
/// - native → Web messages: `emitted(_:)` with the payload as the WebView receives it;
/// - the refresh coordinator: `gesture`/`lifecycle` for pulls, foreground returns, tab
///   activations; `navigated(cause:url:)` for every document load;
/// - the header renderer: `header(_:requestId:)` on each state it enters;
/// - the pull spinner: `pull(_:requestId:outcome:)`; the loading overlay: `overlay(_:)`;
/// - analytics: `analytics(event:properties:)` for each event as it leaves the host.
public final class TodayPageTraceRecorder: @unchecked Sendable {
    public enum Kind: String, CaseIterable {
        case emit, navigation, header, pull, overlay, analytics, resolution
    }

    private let lock = NSLock()
    private let output: FileHandle
    private let clock: () -> Int64
    // Guarded by `lock`.
    private var lastAtMs: Int64 = 0
    private var headerState: (String, String?) = ("hidden", nil)
    private var pullState: (String, String?) = ("idle", nil)
    private var overlayState = "visible"
    private var closed = false

    /// Starts a trace at `url` (created or emptied) with its header and creation lines.
    /// `creation`: the host's settings as `POST /v1/sessions` takes them (`uid` required;
    /// `platform`, `route`, `language`, `loadingGate`, `capabilities`, `timing`, `analytics`).
    /// `clock`: milliseconds of a monotonic clock; the default reads `systemUptime`.
    public init(url: URL, creation: [String: Any], recorded: [Kind] = Kind.allCases, toleranceMs: Int = 100,
                host: String? = nil, clock: (() -> Int64)? = nil) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        output = try FileHandle(forWritingTo: url)
        if let clock {
            let start = clock()
            self.clock = { clock() - start }
        } else {
            let start = ProcessInfo.processInfo.systemUptime
            self.clock = { Int64(((ProcessInfo.processInfo.systemUptime - start) * 1000).rounded(.down)) }
        }
        var header: [String: Any] = ["todaysimTrace": 1, "recorded": recorded.map(\.rawValue), "toleranceMs": toleranceMs]
        if let host { header["host"] = String(String.UnicodeScalarView(host.unicodeScalars.prefix(200))) }  // the verifier counts scalars
        write(header)
        write(["atMs": 0, "kind": "input", "type": "create", "data": ["via": "create", "input": creation]])
    }

    deinit { close() }

    // MARK: Inputs

    /// A user gesture: `["type": "pull"]`, `["type": "liveWidget.created"]`, `["type": "dialog.choose", "actionId": …]`, …
    public func gesture(_ body: [String: Any]) { input("gesture", body) }

    /// An app lifecycle transition: `background`, `foreground`, `tabActivated`, `socketEvent`,
    /// `timerTick`, `navigation` (`url`), `webContentTerminated`, `accountSwitch` (`uid`), `teardown`.
    public func lifecycle(_ body: [String: Any]) { input("lifecycle", body) }

    /// A bridge message from Web, exactly as Web posted it.
    public func webEvent(_ message: [String: Any]) { input("webEvent", message) }

    /// A native → Web command the app decided to send (`todayPage.scrollToSection`).
    public func command(_ body: [String: Any]) { input("command", body) }

    // MARK: Outputs

    /// A message the host sent to Web, as the WebView receives it.
    public func emitted(_ payload: [String: Any]) {
        entry(kind: "emit", type: payload["type"] as? String ?? "", requestId: payload["requestId"] as? String,
              data: ["payload": payload])
    }

    /// A document load: `cause` is `initial`, `recovery`, `manualRepeat`, `termination`,
    /// `accountSwitch` or `navigation`; `url` the URL loaded (a full URL or its path).
    public func navigated(cause: String, url: String, requestId: String? = nil) {
        entry(kind: "navigation", type: cause, requestId: requestId, data: ["url": url, "cause": cause])
    }

    /// The header entered `state` (`hidden`, `refreshing`, `updated`, `failed`) for `requestId`;
    /// a repeat of the state and id it is already in writes nothing.
    public func header(_ state: String, requestId: String?) {
        lock.lock()
        let changed = headerState != (state, requestId)
        if changed { headerState = (state, requestId) }
        lock.unlock()
        if changed { entry(kind: "header", type: state, requestId: requestId, data: ["to": state]) }
    }

    /// The pull spinner entered `state` (`refreshing`, or `idle` with how it ended: `succeeded`,
    /// `failed`, `cancelled`, `unsupported`, `unknown`, `timedOut`).
    public func pull(_ state: String, requestId: String?, outcome: String? = nil) {
        lock.lock()
        let changed = pullState != (state, requestId) || state == "idle" && pullState.0 != "idle"
        if changed { pullState = (state, requestId) }
        lock.unlock()
        guard changed else { return }
        var data: [String: Any] = ["state": state]
        if let outcome { data["outcome"] = outcome }
        entry(kind: "pull", type: state, requestId: requestId, data: data)
    }

    /// The native loading overlay is now `visible` or `hidden`.
    public func overlay(_ state: String) {
        lock.lock()
        let changed = overlayState != state
        overlayState = state
        lock.unlock()
        if changed { entry(kind: "overlay", type: state, requestId: nil, data: ["to": state]) }
    }

    /// A document load shows the overlay again without a line (H3): call this at every load.
    public func overlayShownByLoad() {
        lock.lock()
        let wasHidden = overlayState == "hidden"
        overlayState = "visible"
        lock.unlock()
        if wasHidden { entry(kind: "overlay", type: "visible", requestId: nil, data: ["to": "visible"]) }
    }

    /// An analytics event as it left the host, with every property it carries.
    public func analytics(event: String, properties: [String: Any]) {
        entry(kind: "analytics", type: event, requestId: nil, data: ["event": event, "properties": properties])
    }

    /// A pending bridge call settled later (`nativeDialog.present`).
    public func resolved(type: String, callId: String, value: Any) {
        entry(kind: "resolution", type: type, requestId: nil, data: ["callId": callId, "value": value])
    }

    /// Ends the trace; later calls write nothing.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        try? output.close()
    }

    // MARK: Lines

    private func input(_ via: String, _ body: [String: Any]) {
        entry(kind: "input", type: body["type"] as? String ?? via, requestId: nil, data: ["via": via, "input": body])
    }

    private func entry(kind: String, type: String, requestId: String?, data: [String: Any]) {
        lock.lock()
        defer { lock.unlock() }
        // A monotonic clock never goes back; a trace's times may not either, whatever thread wrote last.
        lastAtMs = max(lastAtMs, clock())
        var line: [String: Any] = ["atMs": lastAtMs, "kind": kind, "type": type, "data": data]
        if let requestId { line["requestId"] = requestId }
        writeLocked(line)
    }

    private func write(_ object: [String: Any]) {
        lock.lock()
        defer { lock.unlock() }
        writeLocked(object)
    }

    private func writeLocked(_ object: [String: Any]) {
        guard !closed, JSONSerialization.isValidJSONObject(object),
              var bytes = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        bytes.append(UInt8(ascii: "\n"))
        output.write(bytes)
    }
}

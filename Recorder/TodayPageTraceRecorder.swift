import Foundation

/// Records what an app's Today Page host receives and does as a todaysim host trace
/// (docs/TRACES.md), for `todaysim verify-host` to judge against the rules.
///
/// The package product `TodayTraceRecorder`, added to the app target (or this one file, copied
/// beside the bridge); it needs Foundation only. Create one
/// recorder per Today Page host (at the host's creation), call it where the host receives an
/// input and where it makes an output, and `close()` it when the test ends. Times come from a
/// monotonic clock that keeps counting while the device sleeps (see `init`), in milliseconds since the recorder
/// was made. Every call is one line, written at once; calls from several threads are serialized.
/// `close()` writes the end line (`{"atMs": T, "kind": "end"}`): the verifier replays to it, so a
/// spinner or header the host left up when recording stopped is judged `missing`.
///
/// A call whose body is not plain JSON (a `Date`, `Data`, a `URL`, a class of the app's, a
/// dictionary with keys that are not strings, a non-finite number) throws `NotJSON` naming the
/// field, and writes nothing: a line is never dropped without a word. `nil` (an `Optional` that
/// is empty) is written as JSON `null`.
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
    public enum Kind: String, CaseIterable, Sendable {
        case emit, navigation, header, pull, overlay, analytics, resolution
    }

    /// A value with no JSON form, refused where it was written: `path` names the field in the
    /// line (`data.input.items[2].when`), `valueType` what was there.
    public struct NotJSON: Error, CustomStringConvertible, Sendable {
        public var path: String
        public var valueType: String
        public var description: String {
            "the trace line's \(path) is a \(valueType), which has no JSON form: pass plain JSON values "
                + "(String, numbers, Bool, nil or NSNull, arrays, [String: Any]); the line was not written"
        }
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
    /// `clock`: milliseconds of a monotonic clock; the default keeps counting while the device
    /// sleeps (`CLOCK_MONOTONIC` on Apple's systems, `CLOCK_BOOTTIME` on Linux), as the time the
    /// rules measure does: an app away 6 s with the screen locked has been away 6 s (H15).
    /// `ProcessInfo.systemUptime` stops while the device sleeps, so a trace on it shortens every
    /// sleep; a test passes a clock it moves by hand. Throws
    /// `NotJSON` for a creation that is not plain JSON, or the file's error.
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
            let start = Self.awakeOrAsleepMs()
            self.clock = { Self.awakeOrAsleepMs() - start }
        }
        var header: [String: Any] = ["todaysimTrace": 1, "recorded": recorded.map(\.rawValue), "toleranceMs": toleranceMs]
        if let host { header["host"] = String(String.UnicodeScalarView(host.unicodeScalars.prefix(200))) }  // the verifier counts scalars
        try write(header)
        try write(["atMs": 0, "kind": "input", "type": "create", "data": ["via": "create", "input": creation]])
    }

    /// Milliseconds of the system's monotonic clock that counts sleep too.
    static func awakeOrAsleepMs() -> Int64 {
        #if canImport(Darwin)
        return Int64(clock_gettime_nsec_np(CLOCK_MONOTONIC) / 1_000_000)
        #else
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        #endif
    }

    /// An unclosed recorder ends its trace when it goes (the end line at that time).
    deinit { try? close() }

    // MARK: Inputs

    /// A user gesture: `["type": "pull"]`, `["type": "liveWidget.created"]`, `["type": "dialog.choose", "actionId": …]`, …
    public func gesture(_ body: [String: Any]) throws { try input("gesture", body) }

    /// An app lifecycle transition: `background`, `foreground`, `tabActivated`, `socketEvent`,
    /// `timerTick`, `navigation` (`url`), `webContentTerminated`, `accountSwitch` (`uid`), `teardown`.
    public func lifecycle(_ body: [String: Any]) throws { try input("lifecycle", body) }

    /// A bridge message from Web, exactly as Web posted it.
    public func webEvent(_ message: [String: Any]) throws { try input("webEvent", message) }

    /// A native → Web command the app decided to send (`todayPage.scrollToSection`).
    public func command(_ body: [String: Any]) throws { try input("command", body) }

    // MARK: Outputs

    /// A message the host sent to Web, as the WebView receives it.
    public func emitted(_ payload: [String: Any]) throws {
        try entry(kind: "emit", type: payload["type"] as? String ?? "", requestId: payload["requestId"] as? String,
              data: ["payload": payload])
    }

    /// A document load: `cause` is `initial`, `recovery`, `manualRepeat`, `termination`,
    /// `accountSwitch` or `navigation`; `url` the URL loaded (a full URL or its path).
    public func navigated(cause: String, url: String, requestId: String? = nil) throws {
        try entry(kind: "navigation", type: cause, requestId: requestId, data: ["url": url, "cause": cause])
    }

    /// The header entered `state` (`hidden`, `refreshing`, `updated`, `failed`) for `requestId`;
    /// a repeat of the state and id it is already in writes nothing.
    public func header(_ state: String, requestId: String?) throws {
        try changing { $0.headerState != (state, requestId) } to: { $0.headerState = (state, requestId) } then: {
            try $0.entryLocked(kind: "header", type: state, requestId: requestId, data: ["to": state])
        }
    }

    /// The pull spinner entered `state` (`refreshing`, or `idle` with how it ended: `succeeded`,
    /// `failed`, `cancelled`, `unsupported`, `unknown`, `timedOut`).
    public func pull(_ state: String, requestId: String?, outcome: String? = nil) throws {
        var data: [String: Any] = ["state": state]
        if let outcome { data["outcome"] = outcome }
        try changing { $0.pullState != (state, requestId) || state == "idle" && $0.pullState.0 != "idle" }
            to: { $0.pullState = (state, requestId) }
            then: { try $0.entryLocked(kind: "pull", type: state, requestId: requestId, data: data) }
    }

    /// The native loading overlay is now `visible` or `hidden`.
    public func overlay(_ state: String) throws {
        try changing { $0.overlayState != state } to: { $0.overlayState = state } then: {
            try $0.entryLocked(kind: "overlay", type: state, requestId: nil, data: ["to": state])
        }
    }

    /// A document load shows the overlay again without a line (H3): call this at every load.
    public func overlayShownByLoad() throws {
        try changing { $0.overlayState == "hidden" } to: { $0.overlayState = "visible" } then: {
            try $0.entryLocked(kind: "overlay", type: "visible", requestId: nil, data: ["to": "visible"])
        }
    }

    /// An analytics event as it left the host, with every property it carries.
    public func analytics(event: String, properties: [String: Any]) throws {
        try entry(kind: "analytics", type: event, requestId: nil, data: ["event": event, "properties": properties])
    }

    /// A pending bridge call settled later (`nativeDialog.present`).
    public func resolved(type: String, callId: String, value: Any) throws {
        try entry(kind: "resolution", type: type, requestId: nil, data: ["callId": callId, "value": value])
    }

    /// Ends the trace with its end line (`{"atMs": T, "kind": "end"}`, T the clock now) and closes
    /// the file; later calls write nothing. Throws the file's error.
    public func close() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        lastAtMs = max(lastAtMs, clock())
        defer {
            closed = true
            try? output.close()
        }
        try writeLocked(["atMs": lastAtMs, "kind": "end"])
        try output.synchronize()
    }

    // MARK: Lines

    private func input(_ via: String, _ body: [String: Any]) throws {
        try entry(kind: "input", type: body["type"] as? String ?? via, requestId: nil, data: ["via": via, "input": body])
    }

    /// A state line written only on a change: `changed` and `record` read and set the state,
    /// and the line is written, all under the lock, so two threads cannot both see a change.
    /// A line that cannot be written leaves the state as it was.
    private func changing(_ changed: (TodayPageTraceRecorder) -> Bool, to record: (TodayPageTraceRecorder) -> Void,
                          then write: (TodayPageTraceRecorder) throws -> Void) throws {
        lock.lock()
        defer { lock.unlock() }
        guard !closed, changed(self) else { return }
        try write(self)
        record(self)
    }

    private func entry(kind: String, type: String, requestId: String?, data: [String: Any]) throws {
        lock.lock()
        defer { lock.unlock() }
        try entryLocked(kind: kind, type: type, requestId: requestId, data: data)
    }

    private func entryLocked(kind: String, type: String, requestId: String?, data: [String: Any]) throws {
        guard !closed else { return }
        // A monotonic clock never goes back; a trace's times may not either, whatever thread wrote last.
        let atMs = max(lastAtMs, clock())
        var line: [String: Any] = ["atMs": atMs, "kind": kind, "type": type, "data": data]
        if let requestId { line["requestId"] = requestId }
        try writeLocked(line)
        lastAtMs = atMs
    }

    private func write(_ object: [String: Any]) throws {
        lock.lock()
        defer { lock.unlock() }
        try writeLocked(object)
    }

    private func writeLocked(_ object: [String: Any]) throws {
        guard !closed else { return }
        var bytes = try JSONSerialization.data(withJSONObject: Self.plainJSON(object, at: ""),
                                               options: [.sortedKeys, .withoutEscapingSlashes])
        bytes.append(UInt8(ascii: "\n"))
        try output.write(contentsOf: bytes)
    }

    /// `value` with every empty `Optional` as `NSNull`, or `NotJSON` naming the first value that
    /// has no JSON form (checked before `JSONSerialization`, which would only say that one exists).
    static func plainJSON(_ value: Any, at path: String) throws -> Any {
        switch value {
        case is String, is NSNull, is Bool, is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16, is UInt32, is UInt64:
            return value
        case let number as Double:
            guard number.isFinite else { throw NotJSON(path: path, valueType: "non-finite Double (\(number))") }
            return number
        case let number as Float:
            guard number.isFinite else { throw NotJSON(path: path, valueType: "non-finite Float (\(number))") }
            return number
        case let number as NSNumber:
            guard number.doubleValue.isFinite else { throw NotJSON(path: path, valueType: "non-finite NSNumber (\(number))") }
            return number
        case let object as [String: Any]:
            var plain: [String: Any] = [:]
            for (name, member) in object {
                plain[name] = try plainJSON(member, at: path.isEmpty ? name : path + "." + name)
            }
            return plain
        case let array as [Any]:
            return try array.enumerated().map { index, item in try plainJSON(item, at: path + "[\(index)]") }
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return NSNull() }
                return try plainJSON(wrapped, at: path)
            }
            if mirror.displayStyle == .dictionary {
                throw NotJSON(path: path, valueType: "\(type(of: value)) (a JSON object's names must be Strings)")
            }
            throw NotJSON(path: path, valueType: "\(type(of: value))")
        }
    }
}

/// The store's binary form of a snapshot: every part writes its fields in declaration order,
/// the layout of `StateFormat.version` (a session stored by an earlier todaysim reads back).
extension SessionSnapshot: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.string(id)
        writer.value(config)
        writer.string(uid)
        writer.bool(isClosed)
        writer.int(version)
        writer.int(nowMs)
        writer.int(lastSeq)
        writer.int(step)
        writer.int(requestCounter)
        writer.int(violationCount)
        writer.array(injectedCapabilities) { $0.string($1) }
        app.encode(to: &writer)
        document.encode(to: &writer)
        header.encode(to: &writer)
        pull.encode(to: &writer)
        writer.optional(manualWindow.lastGestureAtMs) { $0.int($1) }
        refresh.encode(to: &writer)
        writer.bool(recovery.armed)
        chat.encode(to: &writer)
        writer.raw(liveWidgetSheet.state)
        dialog.encode(to: &writer)
        writer.int(dialogCounter)
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        id = try reader.string()
        config = try reader.value()
        uid = try reader.string()
        isClosed = try reader.bool()
        version = try reader.int()
        nowMs = try reader.int64()
        lastSeq = try reader.int()
        step = try reader.int()
        requestCounter = try reader.int()
        violationCount = try reader.int()
        injectedCapabilities = try reader.array { reader throws(StateDecodingError) in try reader.string() }
        app = try App(from: &reader)
        document = try Document(from: &reader)
        header = try Header(from: &reader)
        pull = try Pull(from: &reader)
        manualWindow = ManualWindow(lastGestureAtMs: try reader.optional { reader throws(StateDecodingError) in try reader.int64() })
        refresh = try Refresh(from: &reader)
        recovery = Recovery(armed: try reader.bool())
        chat = try Chat(from: &reader)
        liveWidgetSheet = Sheet(state: try reader.raw())
        dialog = try Dialog(from: &reader)
        dialogCounter = try reader.int()
    }
}

extension SessionSnapshot.App {
    func encode(to writer: inout StateWriter) {
        switch state {
        case .foreground: writer.int(0)
        case let .background(sinceMs): writer.int(1); writer.int(sinceMs)
        }
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        switch try reader.int() {
        case 0: state = .foreground
        case 1: state = .background(sinceMs: try reader.int64())
        default: throw reader.error("unknown app state")
        }
    }
}

extension SessionSnapshot.Document {
    func encode(to writer: inout StateWriter) {
        writer.int(loadId)
        writer.string(url)
        writer.optional(requestId) { $0.string($1) }
        writer.bool(awaitingResult)
        writer.raw(state)
        writer.raw(cause)
        writer.bool(renderedBatch)
        writer.bool(contentVisible)
        writer.raw(overlay.state)
        writer.bool(overlay.releasedByWeb)
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        loadId = try reader.int()
        url = try reader.string()
        requestId = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        awaitingResult = try reader.bool()
        state = try reader.raw()
        cause = try reader.raw()
        renderedBatch = try reader.bool()
        contentVisible = try reader.bool()
        overlay = SessionSnapshot.Overlay(state: try reader.raw(), releasedByWeb: try reader.bool())
    }
}

extension SessionSnapshot.Header {
    func encode(to writer: inout StateWriter) {
        switch state {
        case .hidden: writer.int(0)
        case let .refreshing(requestId, watchdog): writer.int(1); writer.string(requestId); writer.value(watchdog)
        case let .updated(requestId, hide): writer.int(2); writer.string(requestId); writer.value(hide)
        case let .failed(requestId, hide): writer.int(3); writer.string(requestId); writer.value(hide)
        }
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        switch try reader.int() {
        case 0: state = .hidden
        case 1: state = .refreshing(requestId: try reader.string(), watchdog: try reader.value())
        case 2: state = .updated(requestId: try reader.string(), hide: try reader.value())
        case 3: state = .failed(requestId: try reader.string(), hide: try reader.value())
        default: throw reader.error("unknown header state")
        }
    }
}

extension SessionSnapshot.Pull {
    func encode(to writer: inout StateWriter) {
        switch state {
        case .idle: writer.int(0)
        case let .refreshing(requestId, watchdog): writer.int(1); writer.string(requestId); writer.value(watchdog)
        }
        writer.optional(lastOutcome) { $0.raw($1) }
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        switch try reader.int() {
        case 0: state = .idle
        case 1: state = .refreshing(requestId: try reader.string(), watchdog: try reader.value())
        default: throw reader.error("unknown pull state")
        }
        lastOutcome = try reader.optional { reader throws(StateDecodingError) in try reader.raw() }
    }
}

extension SessionSnapshot.Refresh {
    func encode(to writer: inout StateWriter) {
        writer.array(pending) { writer, request in
            writer.string(request.requestId)
            writer.optional(request.reason) { $0.raw($1) }
            writer.int(request.requestedAtMs)
        }
        writer.optional(deadline) { $0.value($1) }
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        pending = try reader.array { reader throws(StateDecodingError) in
            SoftRefresh.PendingRequest(requestId: try reader.string(),
                                       reason: try reader.optional { reader throws(StateDecodingError) in try reader.raw() },
                                       requestedAtMs: try reader.int64())
        }
        deadline = try reader.optional { reader throws(StateDecodingError) in try reader.value() }
    }
}

extension SessionSnapshot.Chat {
    func encode(to writer: inout StateWriter) {
        writer.optional(draft) { $0.string($1) }
        writer.optional(pendingTriggerId) { $0.string($1) }
        writer.array(attribution) { writer, parameter in
            writer.string(parameter.name)
            writer.string(parameter.value)
        }
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        draft = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        pendingTriggerId = try reader.optional { reader throws(StateDecodingError) in try reader.string() }
        attribution = try reader.array { reader throws(StateDecodingError) in
            ChatAttribution.Parameter(name: try reader.string(), value: try reader.string())
        }
    }
}

extension SessionSnapshot.Dialog {
    func encode(to writer: inout StateWriter) {
        writer.optional(open) { writer, open in
            writer.string(open.callId)
            writer.string(open.title)
            writer.array(open.actions) { writer, action in
                writer.string(action.actionId)
                writer.string(action.title)
                writer.optional(action.role) { $0.string($1) }
            }
        }
    }

    init(from reader: inout StateReader) throws(StateDecodingError) {
        open = try reader.optional { reader throws(StateDecodingError) in
            NativeDialog.Open(callId: try reader.string(), title: try reader.string(),
                              actions: try reader.array { reader throws(StateDecodingError) in
                                  BridgeEvent.DialogAction(actionId: try reader.string(), title: try reader.string(),
                                                           role: try reader.optional { reader throws(StateDecodingError) in try reader.string() })
                              })
        }
    }
}

/// Web → native messages after the bridge boundary (H12, H21–H23).
extension HostSession {
    mutating func bridgeMessage(_ message: JSON, _ log: inout StepLog) throws(InputError) -> (Outcome, JSON) {
        guard case .object = message, let type = message["type"]?.stringValue else {
            throw .invalidField("type", "a bridge message is an object with a string type")
        }
        let parser = BridgeParser(capabilities: injectedCapabilities, loadingGate: config.loadingGate)
        // The id a message names, even one it breaks: violations about it carry it.
        let namedId = message["requestId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let bridgeEntry = log.entries.count
        append(kind: .bridge, type: type, requestId: message["requestId"]?.stringValue, data: .null, &log)
        let outcome: Outcome
        var resolution = JSON.null
        switch parser.parse(type: type, message: message) {
        case let .ignored(reason):
            outcome = .ignored(reason)
            if reason == .capabilityNotAdvertised { monitorUnadvertisedStart(requestId: namedId, &log) }
        case let .rejected(rejection):
            outcome = .rejected(rejection)
            if type.hasPrefix("todayPage.") { monitorRejected(type: type, rejection, requestId: namedId, &log) }
        case let .event(event):
            (outcome, resolution) = bridgeEvent(event, &log)
        }
        var data: [(String, JSON)] = [("outcome", .string(outcome.name))]
        if let reason = outcome.reason { data.append(("reason", .string(reason))) }
        if case let .rejected(rejection) = outcome { data.append(("field", .string(rejection.field))) }
        log.entries[bridgeEntry].data = .object(data)
        log.entries[bridgeEntry].rule = outcome.rule(forType: type)
        // Every todayPage.* event resolves `undefined` (H21).
        return (outcome, resolution)
    }

    /// Every event the bridge passed, each to what it concerns (no `default`: a new event must
    /// be routed here to compile).
    private mutating func bridgeEvent(_ event: BridgeEvent, _ log: inout StepLog) -> (Outcome, JSON) {
        switch event {
        case let .refreshStarted(requestId):
            return (refreshStarted(requestId, &log), .null)
        case let .refreshResult(result):
            return (refreshResult(result, &log), .null)
        case let .firstBatchRendered(_, _, requestId):
            return (renderEvent(requestId: requestId, &log) { session, log in
                session.document.firstBatchRendered()
                return session.config.loadingGate == .render
            }, .null)
        case let .allBatchesRendered(_, empty, _, requestId):
            return (renderEvent(requestId: requestId, &log) { session, log in
                session.document.allBatchesRendered(empty: empty)
                return session.config.loadingGate == .render && empty
            }, .null)
        case let .loadFailed(_, _, requestId):
            return (renderEvent(requestId: requestId, &log) { session, log in
                session.monitorLoadFailed(&log)
                session.document.loadFailed()
                return session.config.loadingGate == .render
            }, .null)
        case let .loadingPresentation(owner, _):
            return (loadingPresentation(owner: owner, &log), .null)
        case let .track(event, properties):
            record([forwardedAnalytics(event: event, webProperties: properties)], &log)
            return (.applied, .null)
        case let .navigationAction(url):
            return (navigationAction(url: url), .null)
        case .liveWidgetCreationPresent:
            return liveWidgetCreationPresent()
        case let .nativeDialogPresent(title, actions):
            return nativeDialogPresent(title: title, actions: actions)
        }
    }

    /// H12: Web shows the start of a request in the header.
    private mutating func refreshStarted(_ requestId: String, _ log: inout StepLog) -> Outcome {
        monitorStart(for: requestId, &log)
        if !log.ledger.contains(requestId) {
            log.ledger.write(RequestRecord(requestId: requestId, role: .webMinted, requestedAtMs: nowMs))
        }
        record(header.refreshStarted(requestId: requestId, at: instant, watchdogMs: config.timing.headerWatchdogMs), &log)
        return .applied
    }

    /// H23: Web releases the loading overlay it owns.
    private mutating func loadingPresentation(owner: String, _ log: inout StepLog) -> Outcome {
        guard owner == "web" else { return .ignored(.ownerNotWeb) }
        switch document.overlay.webReleased() {
        case .alreadyReleased: return .ignored(.alreadyReleased)
        case let .hidden(effects): record(effects, &log)
        }
        return .applied
    }

    /// H22: a render fact for the current load, unless it names an earlier load's URL id.
    /// `change` updates the document and tells whether the `render` gate hides the overlay (H23).
    private mutating func renderEvent(requestId: String?, _ log: inout StepLog,
                                      change: (inout HostSession, inout StepLog) -> Bool) -> Outcome {
        if let requestId, let record = log.ledger.record(for: requestId), record.role == .reload,
           let loadId = record.loadId, loadId < document.loadId
        {
            return .ignored(.staleRender)
        }
        monitorRenderBeforeRelease(&log)
        if change(&self, &log) { record(document.overlay.hideForRender(), &log) }
        return .applied
    }
}

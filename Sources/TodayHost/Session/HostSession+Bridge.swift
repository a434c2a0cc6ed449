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
            return (renderEvent(requestId: requestId, &log) { session, _ in
                session.document.firstBatchRendered(gate: session.config.loadingGate)
            }, .null)
        case let .allBatchesRendered(_, empty, _, requestId):
            return (renderEvent(requestId: requestId, &log) { session, _ in
                session.document.allBatchesRendered(empty: empty, gate: session.config.loadingGate)
            }, .null)
        case let .loadFailed(_, _, requestId):
            return (renderEvent(requestId: requestId, &log) { session, log in
                session.monitorLoadFailed(&log)
                return session.document.loadFailed(gate: session.config.loadingGate)
            }, .null)
        case let .loadingPresentation(owner, _):
            return (perform(document.loadingPresentation(owner: owner), &log), .null)
        case let .track(event, properties):
            return (perform([forwardedAnalytics(event: event, webProperties: properties)], &log), .null)
        case let .navigationAction(url):
            guard let link = DeepLink(url), link.isTrustedChatLink else { return (.ignored(.untrustedLink), .null) }
            return (perform(chat.linkOpened(link), &log), .null)
        case .liveWidgetCreationPresent:
            let advertised = injectedCapabilities.contains(Capability.liveWidgetCreation)
            return (perform(liveWidgetSheet.presentRequested(advertised: advertised), &log), log.answer)
        case let .nativeDialogPresent(title, actions):
            let advertised = injectedCapabilities.contains(Capability.nativeDialog)
            let effects = dialog.presentRequested(title: title, actions: actions, advertised: advertised, sessionId: id)
            return (perform(effects, &log), log.answer)
        }
    }

    /// H12: Web shows the start of a request in the header.
    private mutating func refreshStarted(_ requestId: String, _ log: inout StepLog) -> Outcome {
        monitorStart(for: requestId, &log)
        if !log.ledger.contains(requestId) {
            log.ledger.write(RequestRecord(requestId: requestId, role: .webMinted, requestedAtMs: nowMs))
        }
        perform(header.refreshStarted(requestId: requestId, at: instant, watchdogMs: config.timing.headerWatchdogMs), &log)
        return .applied
    }

    /// H22: a render fact for the current load, unless it names an earlier load's URL id.
    /// `change` tells the document, which answers with the overlay's effects (H23).
    private mutating func renderEvent(requestId: String?, _ log: inout StepLog,
                                      change: (inout HostSession, inout StepLog) -> [Effect]) -> Outcome {
        if let requestId, let record = log.ledger.record(for: requestId), record.role == .reload,
           let loadId = record.loadId, loadId < document.loadId
        {
            return .ignored(.staleRender)
        }
        monitorRenderBeforeRelease(&log)
        return perform(change(&self, &log), &log)
    }
}

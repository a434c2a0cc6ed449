/// The contract monitor (M1–M9): checks Web's side of the protocol. Each breach is a
/// `violation` entry that says what Web did, what the contract wanted, and which rule; the
/// host's behaviour is the same with or without it.
extension HostSession {
    mutating func violation(_ code: String, requestId: String?, _ detail: String, _ log: inout StepLog) {
        perform([.violation(code: code, detail: "\(code): \(detail)", requestId: requestId)], &log)
    }

    /// M1: one `refreshResult` per `requestId`. M4: native soft requests are answered only
    /// `succeeded` or `failed`. M5: a hard load's success follows its first visible render.
    mutating func monitorResult(_ result: BridgeEvent.RefreshResult, _ log: inout StepLog) {
        let requestId = result.requestId
        let record = log.ledger.record(for: requestId)
        if let record, record.resultCount >= 1 {
            violation("M1", requestId: requestId,
                      "Web sent refreshResult number \(record.resultCount + 1) for \(requestId); the contract allows exactly one per requestId", &log)
        }
        if let record, record.role == .soft, result.status == .cancelled || result.status == .unsupported {
            let status = result.status == .cancelled ? "cancelled" : "unsupported"
            violation("M4", requestId: requestId,
                      "Web answered the native soft request \(requestId) with status \(status); native-requested soft refreshes may only end succeeded or failed", &log)
        }
        if document.ownedRequestId == requestId, result.status == .succeeded, !document.contentVisible {
            violation("M5", requestId: requestId,
                      "Web reported the hard load \(requestId) succeeded before its firstBatchRendered (or allBatchesRendered with empty: true); success must follow the first visible render", &log)
        }
    }

    /// M2: `refreshStarted` is only for hosts that advertise the feedback capability.
    mutating func monitorUnadvertisedStart(requestId: String?, _ log: inout StepLog) {
        violation("M2", requestId: requestId,
                  "Web sent todayPage.refreshStarted but this host does not advertise \(Capability.revalidateFeedback); Web must not emit it then", &log)
    }

    /// M3: pull, tab and silent requests never get header feedback; nor does the reload a
    /// repeated pull makes (H10: it is a pull too).
    mutating func monitorStart(for requestId: String, _ log: inout StepLog) {
        guard let record = log.ledger.record(for: requestId) else { return }
        let reason: String
        switch (record.role, record.reason) {
        case let (.soft, given?) where given == .userPull || given == .tabActivated: reason = "reason \(given.rawValue)"
        case (.soft, nil): reason = "no reason (socket or timer)"
        case (.reload, _) where record.cause == .manualRepeat: reason = "a repeated pull's hard reload (manualRepeat)"
        default: return
        }
        violation("M3", requestId: requestId,
                  "Web started header feedback for the native request \(requestId) with \(reason); user pulls, tab activations and silent refreshes must show none", &log)
    }

    /// M6: `loadFailed` only before any batch of the load is visible.
    mutating func monitorLoadFailed(_ log: inout StepLog) {
        guard document.renderedBatch else { return }
        violation("M6", requestId: document.requestId,
                  "Web sent loadFailed for load \(document.loadId) after a batch of it was rendered; widget failures after content is visible are not loadFailed", &log)
    }

    /// M7: every native request gets an answer before the deadline.
    mutating func monitorUnanswered(_ request: SoftRefresh.PendingRequest, _ log: inout StepLog) {
        violation("M7", requestId: request.requestId,
                  "Web never answered the native request \(request.requestId) (requested at \(request.requestedAtMs) ms) before the \(config.timing.softRefreshDeadlineMs) ms deadline; every native request needs exactly one refreshResult", &log)
    }

    /// M8: known `todayPage.*` events must keep their shape.
    mutating func monitorRejected(type: String, _ rejection: BridgeRejection, requestId: String?, _ log: inout StepLog) {
        violation("M8", requestId: requestId,
                  "Web sent a malformed \(type) (\(rejection.reason)); the host rejected it at the bridge", &log)
    }

    /// M9: on a `presentation` host, Web releases the overlay before it renders or fails.
    mutating func monitorRenderBeforeRelease(_ log: inout StepLog) {
        guard config.loadingGate == .presentation, !document.overlay.releasedByWeb else { return }
        violation("M9", requestId: nil,
                  "Web rendered or failed load \(document.loadId) before releasing the native overlay with webView.loadingPresentation {owner: \"web\"}", &log)
    }
}

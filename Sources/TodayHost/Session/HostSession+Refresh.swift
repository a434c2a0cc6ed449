/// Native requests, Web's results, the soft deadline, recovery reloads and navigations
/// (H3–H9, H11).
extension HostSession {
    /// H4, H5: a soft request with its reason (`nil`: the legacy silent path).
    mutating func requestSoftRefresh(_ reason: RefreshReason?, callerRequestId: String?, _ log: inout StepLog) {
        requestSoftRefresh(reason, requestId: newRequestId(callerRequestId, log), &log)
    }

    mutating func requestSoftRefresh(_ reason: RefreshReason?, requestId: String, _ log: inout StepLog) {
        log.ledger.write(RequestRecord(requestId: requestId, role: .soft, reason: reason, requestedAtMs: nowMs,
                                       madeAfterSeq: lastSeq))
        perform(refresh.request(requestId: requestId, reason: reason, at: instant, deadlineMs: config.timing.softRefreshDeadlineMs), &log)
    }

    /// A native request reached its end: in the ledger, answered when Web's result settled it
    /// (H7). Called by `record` for each `requestSettled`, before its timeline entry.
    mutating func noteSettled(_ requestId: String, _ outcome: RequestOutcome, rule: Rule?, _ log: inout StepLog) {
        let settledAt = nowMs
        log.ledger.update(requestId) { record in
            record.outcome = outcome
            record.settledAtMs = settledAt
            if rule == .h7 { record.answeredAtMs = settledAt }
        }
    }

    /// H7, H8: a well-formed `todayPage.refreshResult`.
    mutating func refreshResult(_ result: BridgeEvent.RefreshResult, _ log: inout StepLog) -> Outcome {
        let requestId = result.requestId
        monitorResult(result, &log)
        noteResult(for: requestId, &log)
        if refresh.isPending(requestId) {
            let effects = refresh.resultArrived(for: requestId, outcome: result.status.outcome)
                + recovery.nativeResult(result.status, requestId: requestId)
            return perform(effects, &log)
        }
        if document.ownedRequestId == requestId {
            let effects = document.ownRequestSettled(result.status.outcome, rule: .h7)
                + recovery.nativeResult(result.status, requestId: requestId)
            return perform(effects, &log)
        }
        // A Web-minted id: its UIs settle, the budget is Web's own business (H9).
        if header.owner == requestId || pull.owner == requestId {
            return perform([.feedbackSettled(requestId: requestId, status: result.status)], &log)
        }
        return .ignored(.staleResult)
    }

    /// H11, H13: a result that made no reload ends the spinner and settles the header that
    /// own its id.
    mutating func feedbackSettled(_ requestId: String, _ status: ResultStatus, _ log: inout StepLog) {
        perform(pull.refreshResult(requestId: requestId, status: status), &log)
        perform(header.refreshResult(requestId: requestId, status: status, at: instant, settleMs: config.timing.headerSettleMs), &log)
    }

    /// Counts results per id (M1) and remembers ids Web made up.
    mutating func noteResult(for requestId: String, _ log: inout StepLog) {
        if !log.ledger.contains(requestId) {
            log.ledger.write(RequestRecord(requestId: requestId, role: .webMinted, requestedAtMs: nowMs))
        }
        log.ledger.update(requestId) { $0.resultCount += 1 }
    }

    /// H6: every pending request times out; H9 decides whether the document reloads.
    mutating func softRefreshDeadlineExpired(_ log: inout StepLog) {
        let unanswered = refresh.pending
        let expired = refresh.deadlinePassed()
        // One settle per pending request, in the same order: each is followed by its M7.
        for (request, settled) in zip(unanswered, expired) {
            perform([settled], &log)
            monitorUnanswered(request, &log)
        }
        perform(recovery.nativeRequestFailed(cause: .recovery, requestId: nil,
                                             otherwise: [.feedbackTimedOut(requestIds: unanswered.map(\.requestId))]), &log)
    }

    /// H6: the deadline made no reload: the spinner and the header waiting for these ids end.
    mutating func feedbackTimedOut(_ requestIds: [String], _ log: inout StepLog) {
        for requestId in requestIds {
            perform(pull.requestConsumed(requestId: requestId, outcome: .timedOut), &log)
            if header.owner == requestId { perform(header.clear(.h6), &log) }
        }
    }

    /// H9, H10, H18: a reload of the host's own document; a spinner still up for another id
    /// follows it (H11).
    mutating func reload(_ cause: LoadCause, callerRequestId: String?, _ log: inout StepLog) {
        let requestId = newRequestId(callerRequestId, log)
        registerReload(requestId, cause: cause, &log)
        navigate(url: ownURL(requestId: requestId), requestId: requestId, cause: cause, &log)
        perform(pull.followReload(requestId: requestId), &log)
    }

    mutating func registerReload(_ requestId: String, cause: LoadCause, _ log: inout StepLog) {
        log.ledger.write(RequestRecord(requestId: requestId, role: .reload, cause: cause,
                                       loadId: document.loadId + 1, requestedAtMs: nowMs, madeAfterSeq: lastSeq))
    }

    /// H3: every navigation consumes the pending requests (`cancelled`) and the outgoing
    /// document's own id, cancels the deadline, clears the header and shows the overlay.
    mutating func navigate(url: String, requestId: String?, cause: LoadCause, _ log: inout StepLog) {
        cancelOpenRequests(.h3, &log)
        perform(header.clear(.h14), &log)
        perform(document.load(url: url, requestId: requestId, cause: cause), &log)
    }

    /// H3, H20: every request still open ends `cancelled`: the pending soft requests, then the
    /// document's own reload id (the document no longer owns it).
    /// `rule`: the rule of what cancels them (H3 a navigation, H20 the teardown).
    mutating func cancelOpenRequests(_ rule: Rule, _ log: inout StepLog) {
        perform(refresh.documentLeft(rule) + document.ownRequestSettled(.cancelled, rule: rule), &log)
    }
}

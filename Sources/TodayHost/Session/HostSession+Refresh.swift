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
        record(refresh.request(requestId: requestId, reason: reason, at: instant, deadlineMs: config.timing.softRefreshDeadlineMs), &log)
    }

    /// The document's own request reached its end (`rule`: H7 Web's answer, H3, H18 or H20 a
    /// cancel); `record` writes it to the ledger too.
    mutating func settle(_ requestId: String, _ outcome: RequestOutcome, rule: Rule, _ log: inout StepLog) {
        record([.requestSettled(requestId: requestId, outcome: outcome, reason: nil, rule: rule)], &log)
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

        let nativeOwned: Bool
        let settled = refresh.resultArrived(for: requestId, outcome: result.status.outcome)
        if !settled.isEmpty {
            record(settled, &log)
            nativeOwned = true
        } else if document.ownedRequestId == requestId {
            document.resultArrived()
            settle(requestId, result.status.outcome, rule: .h7, &log)
            nativeOwned = true
        } else if header.owner == requestId || pull.owner == requestId {
            // A Web-minted id: its UIs settle, the budget is Web's own business (H9).
            nativeOwned = false
        } else {
            return .ignored(.staleResult)
        }

        var reloads = false
        if nativeOwned {
            switch result.status {
            case .succeeded: recovery.nativeRequestSucceeded()
            case .failed, .cancelled, .unsupported: reloads = recovery.nativeRequestFailed() == .reload
            case .other: break
            }
        }
        if reloads {
            // H9: the reload clears the header (H14) and carries the spinner (H11).
            hostReload(.recovery, callerRequestId: nil, &log)
        } else {
            record(pull.refreshResult(requestId: requestId, status: result.status), &log)
            record(header.refreshResult(requestId: requestId, status: result.status, at: instant,
                                        settleMs: config.timing.headerSettleMs), &log)
        }
        return .applied
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
            record([settled], &log)
            monitorUnanswered(request, &log)
        }
        if recovery.nativeRequestFailed() == .reload {
            hostReload(.recovery, callerRequestId: nil, &log)
            return
        }
        for request in unanswered {
            record(pull.requestConsumed(requestId: request.requestId, outcome: .timedOut), &log)
            if header.owner == request.requestId { record(header.clear(.h6), &log) }
        }
    }

    /// H9, H18: a reload the host makes by itself; a spinner still up follows it (H11).
    mutating func hostReload(_ cause: LoadCause, callerRequestId: String?, _ log: inout StepLog) {
        let requestId = newRequestId(callerRequestId, log)
        registerReload(requestId, cause: cause, &log)
        navigate(url: ownURL(requestId: requestId), requestId: requestId, cause: cause, &log)
        record(pull.followReload(requestId: requestId), &log)
    }

    mutating func registerReload(_ requestId: String, cause: LoadCause, _ log: inout StepLog) {
        log.ledger.write(RequestRecord(requestId: requestId, role: .reload, cause: cause,
                                       loadId: document.loadId + 1, requestedAtMs: nowMs, madeAfterSeq: lastSeq))
    }

    /// H3: every navigation consumes the pending requests (`cancelled`) and the outgoing
    /// document's own id, cancels the deadline, clears the header and shows the overlay.
    mutating func navigate(url: String, requestId: String?, cause: LoadCause, _ log: inout StepLog) {
        cancelOpenRequests(.h3, &log)
        record(header.clear(.h14), &log)
        record(document.load(url: url, requestId: requestId, cause: cause), &log)
    }

    /// H3, H20: every request still open ends `cancelled`: the pending soft requests, then the
    /// document's own reload id (the document no longer owns it).
    /// `rule`: the rule of what cancels them (H3 a navigation, H20 the teardown).
    mutating func cancelOpenRequests(_ rule: Rule, _ log: inout StepLog) {
        record(refresh.documentLeft(rule), &log)
        if let owned = document.ownedRequestId {
            document.resultArrived()
            settle(owned, .cancelled, rule: rule, &log)
        }
    }
}

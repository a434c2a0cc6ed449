/// Gestures and app lifecycle transitions (H10, H15–H20, H25–H27).
extension HostSession {
    mutating func gestureReceived(_ gesture: Gesture, _ log: inout StepLog) throws(InputError) -> Outcome {
        switch gesture {
        case let .pull(callerRequestId):
            return pullGesture(callerRequestId: callerRequestId, &log)
        case let .liveWidgetCreated(callerRequestId):
            // H26: creation succeeded; a presented sheet goes away.
            return perform(liveWidgetSheet.dismissed() + [.requestSoftRefresh(reason: .liveWidgetCreated, requestId: callerRequestId)], &log)
        case .liveWidgetCancelled:
            return perform(liveWidgetSheet.creationCancelled(), &log)
        case let .chatEdit(text):
            return perform(chat.edited(text: text), &log)
        case .chatSend:
            return perform(chat.sent(baseProperties: config.analytics.properties(uid: uid)), &log)
        case let .dialogChoose(actionId):
            guard dialog.offers(actionId) else { throw .invalidField("actionId", "the open dialog offers no action \"\(actionId)\"") }
            return perform(dialog.actionChosen(actionId), &log)
        case .dialogDismiss:
            return perform(dialog.dismissedByUser(), &log)
        }
    }

    /// H10: the spinner starts, the budget re-arms, and a repeat within the window (or a
    /// terminated document) reloads at once instead of asking Web.
    mutating func pullGesture(callerRequestId: String?, _ log: inout StepLog) -> Outcome {
        let requestId = newRequestId(callerRequestId, log)
        let effects = recovery.pullGestured()
            + pull.pullGesture(requestId: requestId, at: instant, watchdogMs: config.timing.pullWatchdogMs)
            + manualWindow.pullGesture(requestId: requestId, at: instant, windowMs: config.timing.manualRefreshWindowMs,
                                       documentTerminated: document.state == .terminated)
        return perform(effects, &log)
    }

    mutating func lifecycleChanged(_ lifecycle: Lifecycle, _ log: inout StepLog) throws(InputError) -> Outcome {
        switch lifecycle {
        case .background:
            return perform(app.appBackgrounded(at: instant), &log)
        case let .foreground(callerRequestId):
            return perform(app.appForegrounded(at: instant, thresholdMs: config.timing.foregroundThresholdMs,
                                               requestId: callerRequestId), &log)
        case let .tabActivated(callerRequestId):
            return perform([.requestSoftRefresh(reason: .tabActivated, requestId: callerRequestId)], &log)
        case let .socketEvent(callerRequestId), let .timerTick(callerRequestId):
            return perform([.requestSoftRefresh(reason: nil, requestId: callerRequestId)], &log)
        case let .navigation(url):
            let target = url ?? ownURL(requestId: nil)
            guard target.hasPrefix("/embed/") else { throw .invalidField("url", "must be a path starting with /embed/") }
            navigate(url: target, requestId: nil, cause: .navigation, &log)
            return perform(pull.end(.cancelled), &log)
        case let .webContentTerminated(callerRequestId):
            return webContentTerminated(callerRequestId: callerRequestId, &log)
        case let .accountSwitch(newUid):
            guard !newUid.isEmpty else { throw .invalidField("uid", "must be a non-empty string") }
            return accountSwitch(to: newUid, &log)
        }
    }

    /// H18: the header clears, pending requests are cancelled, and it counts as a failure.
    mutating func webContentTerminated(callerRequestId: String?, _ log: inout StepLog) -> Outcome {
        let effects = header.clear(.h14) + refresh.documentLeft(.h18) + document.terminated()
            + recovery.nativeRequestFailed(cause: .termination, requestId: callerRequestId, otherwise: [.endPull(.cancelled)])
        return perform(effects, &log)
    }

    /// H19: a new uid, a new document, no spinner; the budget is untouched.
    mutating func accountSwitch(to newUid: String, _ log: inout StepLog) -> Outcome {
        let inForeground = app.isForeground
        if inForeground { perform([.hostAnalytics(event: "page_end")], &log) }
        uid = newUid
        navigate(url: ownURL(requestId: nil), requestId: nil, cause: .accountSwitch, &log)
        let effects = pull.end(.cancelled) + chat.accountSwitched() + liveWidgetSheet.dismissed() + dialog.dismissedByHost()
        return perform(effects + (inForeground ? [.hostAnalytics(event: "page_view")] : []), &log)
    }

    /// H20: every timer stops, every UI settles, every open request (the document's own reload
    /// id too) ends `cancelled`, and the session closes.
    mutating func tearDown(_ log: inout StepLog) {
        perform(header.clear(.h14), &log)
        cancelOpenRequests(.h20, &log)
        let effects = pull.end(.cancelled) + liveWidgetSheet.dismissed() + dialog.dismissedByHost()
        perform(effects + (app.isForeground ? [.hostAnalytics(event: "page_end")] : []), &log)
        isClosed = true
    }
}

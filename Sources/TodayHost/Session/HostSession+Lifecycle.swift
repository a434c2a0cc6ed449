/// Gestures and app lifecycle transitions (H10, H15–H20, H26's request).
extension HostSession {
    mutating func gestureReceived(_ gesture: Gesture, _ log: inout StepLog) throws(InputError) -> Outcome {
        switch gesture {
        case let .pull(callerRequestId):
            pullGesture(callerRequestId: callerRequestId, &log)
        case let .liveWidgetCreated(callerRequestId):
            // H26: creation succeeded; a presented sheet goes away.
            _ = liveWidgetSheet.dismiss()
            requestSoftRefresh(.liveWidgetCreated, callerRequestId: callerRequestId, &log)
        case .liveWidgetCancelled:
            guard liveWidgetSheet.dismiss() else { return .ignored(.noSheet) }
        case let .chatEdit(text):
            chat.edit(text: text)
        case .chatSend:
            guard let properties = chat.send() else { return .ignored(.noDraft) }
            record([.analytics(event: "chat_query_submit",
                               properties: .object(properties + config.analytics.properties(uid: uid)))], &log)
        case let .dialogChoose(actionId):
            switch dialog.choose(actionId: actionId) {
            case .noDialog: return .ignored(.noDialog)
            case .unknownAction: throw .invalidField("actionId", "the open dialog offers no action \"\(actionId)\"")
            case let .resolved(callId, value): record([.resolution(type: "nativeDialog.present", callId: callId, value: value)], &log)
            }
        case .dialogDismiss:
            guard case let .resolved(callId, value) = dialog.dismiss() else { return .ignored(.noDialog) }
            record([.resolution(type: "nativeDialog.present", callId: callId, value: value)], &log)
        }
        return .applied
    }

    /// H10: the spinner starts, the budget re-arms, and a repeat within the window (or a
    /// terminated document) reloads at once instead of asking Web.
    mutating func pullGesture(callerRequestId: String?, _ log: inout StepLog) {
        let requestId = newRequestId(callerRequestId, log)
        recovery.pullGestured()
        let repeats = manualWindow.pullGesture(at: instant, windowMs: config.timing.manualRefreshWindowMs)
        record(pull.pullGesture(requestId: requestId, at: instant, watchdogMs: config.timing.pullWatchdogMs), &log)
        if repeats || document.state == .terminated {
            registerReload(requestId, cause: .manualRepeat, &log)
            navigate(url: ownURL(requestId: requestId), requestId: requestId, cause: .manualRepeat, &log)
        } else {
            requestSoftRefresh(.userPull, requestId: requestId, &log)
        }
    }

    mutating func lifecycleChanged(_ lifecycle: Lifecycle, _ log: inout StepLog) throws(InputError) -> Outcome {
        switch lifecycle {
        case .background:
            let hidden = app.appBackgrounded(at: instant)
            guard !hidden.isEmpty else { return .ignored(.alreadyBackground) }
            record(hidden + [hostAnalytics("page_end")], &log)
        case let .foreground(callerRequestId):
            switch app.appForegrounded(at: instant, thresholdMs: config.timing.foregroundThresholdMs) {
            case .alreadyForeground:
                return .ignored(.alreadyForeground)
            case let .returned(shown, revalidate):
                record(shown + [hostAnalytics("page_view")], &log)
                if revalidate { requestSoftRefresh(.appForeground, callerRequestId: callerRequestId, &log) }
            }
        case let .tabActivated(callerRequestId):
            requestSoftRefresh(.tabActivated, callerRequestId: callerRequestId, &log)
        case let .socketEvent(callerRequestId), let .timerTick(callerRequestId):
            requestSoftRefresh(nil, callerRequestId: callerRequestId, &log)
        case let .navigation(url):
            let target = url ?? ownURL(requestId: nil)
            guard target.hasPrefix("/embed/") else { throw .invalidField("url", "must be a path starting with /embed/") }
            navigate(url: target, requestId: nil, cause: .navigation, &log)
            record(pull.end(.cancelled), &log)
        case let .webContentTerminated(callerRequestId):
            webContentTerminated(callerRequestId: callerRequestId, &log)
        case let .accountSwitch(newUid):
            guard !newUid.isEmpty else { throw .invalidField("uid", "must be a non-empty string") }
            accountSwitch(to: newUid, &log)
        }
        return .applied
    }

    /// H18: the header clears, pending requests are cancelled, and it counts as a failure.
    mutating func webContentTerminated(callerRequestId: String?, _ log: inout StepLog) {
        record(header.clear(.h14), &log)
        record(refresh.documentLeft(.h18), &log)
        document.terminated()
        if recovery.nativeRequestFailed() == .reload {
            hostReload(.termination, callerRequestId: callerRequestId, &log)
        } else {
            record(pull.end(.cancelled), &log)
        }
    }

    /// H19: a new uid, a new document, no spinner; the budget is untouched.
    mutating func accountSwitch(to newUid: String, _ log: inout StepLog) {
        let inForeground = app.isForeground
        if inForeground { record([hostAnalytics("page_end")], &log) }
        uid = newUid
        navigate(url: ownURL(requestId: nil), requestId: nil, cause: .accountSwitch, &log)
        record(pull.end(.cancelled), &log)
        chat.clear()
        _ = liveWidgetSheet.dismiss()
        dismissDialog(&log)
        if inForeground { record([hostAnalytics("page_view")], &log) }
    }

    /// H20: every timer stops, every UI settles, every open request (the document's own reload
    /// id too) ends `cancelled`, and the session closes.
    mutating func tearDown(_ log: inout StepLog) {
        record(header.clear(.h14), &log)
        cancelOpenRequests(.h20, &log)
        record(pull.end(.cancelled), &log)
        _ = liveWidgetSheet.dismiss()
        dismissDialog(&log)
        if app.isForeground { record([hostAnalytics("page_end")], &log) }
        isClosed = true
    }
}

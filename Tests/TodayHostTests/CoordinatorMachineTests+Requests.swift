import Testing
@testable import TodayHost

/// The coordinators that hold requests and calls, alone, as straight-line scripts.
extension CoordinatorMachineTests {
    /// H27: one dialog at a time; its call id comes from the session id and the count of
    /// dialogs presented; a choice or a dismissal resolves the pending call.
    @Test func h27_theDialogResolvesItsCall() {
        var dialog = NativeDialog()
        let actions = [BridgeEvent.DialogAction(actionId: "delete", title: "Delete", role: "destructive")]
        #expect(dialog.presentRequested(title: "Delete?", actions: actions, advertised: false, sessionId: "s1")
            == [.ignored(.capabilityNotAdvertised), .answer(["type": "unavailable"])])
        #expect(dialog.actionChosen("delete") == [.ignored(.noDialog)])
        #expect(dialog.dismissedByUser() == [.ignored(.noDialog)])
        #expect(dialog.dismissedByHost() == [])
        #expect(dialog.counter == 0)
        #expect(dialog.presentRequested(title: "Delete?", actions: actions, advertised: true, sessionId: "s1")
            == [.answer(["pending": "e3c28028-bb9c-58e4-bbbc-d3acfd552627"])])
        #expect(dialog.counter == 1)
        #expect(dialog.presentRequested(title: "Again?", actions: actions, advertised: true, sessionId: "s1")
            == [.answer(["type": "busy"])])
        #expect(dialog.counter == 1)
        #expect(dialog.open?.title == "Delete?")
        #expect(dialog.offers("delete") && !dialog.offers("keep"))
        #expect(dialog.actionChosen("delete")
            == [.resolution(type: "nativeDialog.present", callId: "e3c28028-bb9c-58e4-bbbc-d3acfd552627", value: ["type": "action", "actionId": "delete"])])
        #expect(dialog.open == nil)
        #expect(dialog.offers("keep"), "with none open there is nothing to refuse")
        _ = dialog.presentRequested(title: "Delete?", actions: actions, advertised: true, sessionId: "s1")
        #expect(dialog.dismissedByUser() == [.resolution(type: "nativeDialog.present", callId: "36e6d989-991f-561e-b0cd-5a975f52d348", value: ["type": "dismissed"])])
        _ = dialog.presentRequested(title: "Delete?", actions: actions, advertised: true, sessionId: "s1")
        #expect(dialog.dismissedByHost() == [.resolution(type: "nativeDialog.present", callId: "b6ef9b87-cb4f-599a-a4ee-ed1b91512a5c", value: ["type": "dismissed"])])
        #expect(dialog.counter == 3)
    }

    /// H25: a card link prefills the draft with its id; an edit keeps the id; a send takes
    /// both; an empty draft is not sent; H19: an account switch forgets them.
    @Test func h25_theDraftCarriesItsCardId() throws {
        var chat = ChatAttribution()
        let base: [(String, JSON)] = [("uid", "u1")]
        #expect(chat.sent(baseProperties: base) == [.ignored(.noDraft)])
        #expect(chat.edited(text: "") == [])
        #expect(chat.draft == "")
        #expect(chat.sent(baseProperties: base) == [.ignored(.noDraft)])
        #expect(chat.draft == "")
        let link = try #require(DeepLink("today://chat?text=hi&msg_trigger_ele_id=w1&today_a=1&today_a=2&other=x"))
        #expect(chat.linkOpened(link) == [])
        #expect(chat.draft == "hi" && chat.pendingTriggerId == "w1")
        #expect(chat.edited(text: "hello") == [])
        #expect(chat.pendingTriggerId == "w1")
        #expect(chat.sent(baseProperties: base)
            == [.analytics(event: "chat_query_submit", properties: ["text": "hello", "msg_trigger_ele_id": "w1", "today_a": "1", "uid": "u1"])])
        #expect(chat.draft == nil && chat.pendingTriggerId == nil)
        #expect(chat.linkOpened(link) == [])
        #expect(chat.accountSwitched() == [])
        #expect(chat.draft == nil && chat.pendingTriggerId == nil)
    }

    /// H9, H18: one automatic reload until a pull or a native success re-arms the budget;
    /// without it, what the failure does otherwise.
    @Test func h9_theBudgetReloadsOnceUntilReArmed() {
        var budget = RecoveryBudget()
        #expect(budget.nativeResult(.succeeded, requestId: "r1") == [.feedbackSettled(requestId: "r1", status: .succeeded)])
        #expect(budget.armed)
        #expect(budget.nativeResult(.failed, requestId: "r2") == [.reload(cause: .recovery, requestId: nil)])
        #expect(!budget.armed)
        #expect(budget.nativeResult(.cancelled, requestId: "r3") == [.feedbackSettled(requestId: "r3", status: .cancelled)])
        #expect(budget.nativeResult(.other("later"), requestId: "r4") == [.feedbackSettled(requestId: "r4", status: .other("later"))])
        #expect(!budget.armed)
        #expect(budget.nativeRequestFailed(cause: .termination, requestId: "t1", otherwise: [.endPull(.cancelled)]) == [.endPull(.cancelled)])
        #expect(budget.pullGestured() == [])
        #expect(budget.armed)
        #expect(budget.nativeRequestFailed(cause: .termination, requestId: "t1", otherwise: [.endPull(.cancelled)])
            == [.reload(cause: .termination, requestId: "t1")])
        #expect(!budget.armed)
        #expect(budget.nativeResult(.succeeded, requestId: "r5") == [.feedbackSettled(requestId: "r5", status: .succeeded)])
        #expect(budget.armed)
    }

    /// H4–H7, H18: requests share the deadline armed by the first; each ends once.
    @Test func h5_softRequestsShareOneDeadline() {
        var refresh = SoftRefresh()
        #expect(refresh.request(requestId: "a", reason: .tabActivated, at: Self.at(100, step: 2), deadlineMs: 5000)
            == [.emit(type: "todayPage.refreshRequested", requestId: "a",
                      payload: ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "a", "reason": "tab_activated"],
                      rule: .h16)])
        #expect(refresh.deadline == Deadline(dueAtMs: 5100, armedInStep: 2))
        _ = refresh.request(requestId: "b", reason: nil, at: Self.at(900, step: 3), deadlineMs: 5000)
        #expect(refresh.deadline == Deadline(dueAtMs: 5100, armedInStep: 2))
        #expect(refresh.pending.map(\.requestId) == ["a", "b"])
        #expect(refresh.resultArrived(for: "zz", outcome: .succeeded) == [])
        #expect(refresh.resultArrived(for: "a", outcome: .failed)
            == [.requestSettled(requestId: "a", outcome: .failed, reason: .tabActivated, rule: .h7)])
        #expect(refresh.deadline == Deadline(dueAtMs: 5100, armedInStep: 2))
        #expect(refresh.deadlinePassed() == [.requestSettled(requestId: "b", outcome: .timedOut, reason: nil, rule: .h6)])
        #expect(refresh.pending.isEmpty && refresh.deadline == nil && refresh.timers.isEmpty)
        _ = refresh.request(requestId: "c", reason: nil, at: Self.at(6000, step: 4), deadlineMs: 5000)
        #expect(refresh.timers == [Watchdog(kind: .softRefreshDeadline, requestId: nil, deadline: Deadline(dueAtMs: 11000, armedInStep: 4))])
        #expect(refresh.documentLeft(.h18) == [.requestSettled(requestId: "c", outcome: .cancelled, reason: nil, rule: .h18)])
        #expect(refresh.deadlinePassed() == [])
    }

    /// H10, H11: a host reload carries a spinner that is up for another id; a repeated pull's
    /// reload is already its own.
    @Test func h11_theSpinnerFollowsAHostReload() {
        var pull = PullSpinner()
        #expect(pull.followReload(requestId: "r1") == [])
        #expect(pull.pullGesture(requestId: "p1", at: Self.at(0), watchdogMs: 3000)
            == [.pull(state: .refreshing, outcome: nil, requestId: "p1", rule: .h10)])
        #expect(pull.followReload(requestId: "p1") == [])
        #expect(pull.followReload(requestId: "r2") == [.pull(state: .refreshing, outcome: nil, requestId: "r2", rule: .h11)])
        #expect(pull.timers == [Watchdog(kind: .pullWatchdog, requestId: "r2", deadline: Deadline(dueAtMs: 3000, armedInStep: 1))])
        #expect(pull.timerFired(.headerWatchdog) == [])
        #expect(pull.requestConsumed(requestId: "p1", outcome: .timedOut) == [])
        #expect(pull.refreshResult(requestId: "r2", status: .failed) == [.pull(state: .idle, outcome: .failed, requestId: "r2", rule: .h11)])
        #expect(pull.lastOutcome == .failed && pull.owner == nil)
    }
}

import Testing
@testable import TodayHost

/// H26 live widget creation sheet, H27 native dialog (with H19/H20 closing both), H28 scroll
/// to section.
@Suite struct NativeSheetDialogRulesTests {
    // MARK: H26 Live widget creation

    @Test func h26_presentWithTheCapabilityPresentsTheSheetOnce() throws {
        var runner = SessionRunner.make()
        let first = try runner.apply(Web.presentLiveWidgetCreation)
        #expect(first.outcome == .applied)
        #expect(first.resolution == ["presented": true])
        #expect(first.trace == ["input:liveWidgetCreation.present", "bridge:liveWidgetCreation.present"])
        #expect(runner.session.view["liveWidgetSheet"] == "presented")

        let again = try runner.apply(Web.presentLiveWidgetCreation)
        #expect(again.outcome == .applied)
        #expect(again.resolution == ["presented": false])
        #expect(runner.session.view["liveWidgetSheet"] == "presented")
        #expect(runner.violations == [])
    }

    @Test func h26_presentWithoutTheCapabilityIsRefused() throws {
        var runner = SessionRunner.make { $0.route = Route.feedsV3 }
        let applied = try runner.apply(Web.presentLiveWidgetCreation)
        #expect(applied.outcome == .ignored(.capabilityNotAdvertised))
        #expect(applied.resolution == ["presented": false])
        #expect(applied.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "capabilityNotAdvertised"])
        #expect(runner.session.view["liveWidgetSheet"] == "hidden")
        // Not a contract breach: M2 is about refreshStarted only.
        #expect(applied.entries(.violation) == [])
    }

    @Test func h26_createdDismissesTheSheetAndRequestsLiveWidgetCreated() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.presentLiveWidgetCreation)
        let created = try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw1")))
        #expect(created.outcome == .applied)
        #expect(created.trace == ["input:liveWidget.created", "emit:todayPage.refreshRequested"])
        #expect(created.entries(.emit)[0].data == [
            "payload": ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "lw1",
                        "reason": "live_widget_created"],
        ])
        #expect(runner.session.view["liveWidgetSheet"] == "hidden")
        #expect(runner.pending == ["lw1"])
        #expect(runner.timers == ["softRefreshDeadline(-)@5000"])
    }

    @Test func h26_createdFromAnotherEntryPointRequestsWithNoSheetUp() throws {
        var runner = SessionRunner.make()
        let created = try runner.apply(.gesture(.liveWidgetCreated(requestId: "lw1")))
        #expect(created.outcome == .applied)
        #expect(created.trace == ["input:liveWidget.created", "emit:todayPage.refreshRequested"])
        #expect(runner.pending == ["lw1"])
    }

    @Test func h26_cancelledDismissesTheSheetAndRequestsNothing() throws {
        var runner = SessionRunner.make()
        try runner.apply(Web.presentLiveWidgetCreation)
        let cancelled = try runner.apply(.gesture(.liveWidgetCancelled))
        #expect(cancelled.outcome == .applied)
        #expect(cancelled.trace == ["input:liveWidget.cancelled"])
        #expect(runner.session.view["liveWidgetSheet"] == "hidden")
        #expect(runner.pending == [])
        #expect(runner.refreshRequests == [])

        let noSheet = try runner.apply(.gesture(.liveWidgetCancelled))
        #expect(noSheet.outcome == .ignored(.noSheet))
        #expect(noSheet.trace == ["input:liveWidget.cancelled"])
        // The sheet can be presented again once it is gone.
        #expect(try runner.apply(Web.presentLiveWidgetCreation).resolution == ["presented": true])
    }

    // MARK: H27 Native dialog

    static let firstCallId = "e3c28028-bb9c-58e4-bbbc-d3acfd552627"  // name-based: "s1/dialog/1"
    static let secondCallId = "36e6d989-991f-561e-b0cd-5a975f52d348"  // "s1/dialog/2"

    static func editSession(_ configure: (inout SessionConfig) -> Void = { _ in }) -> SessionRunner {
        SessionRunner.make {
            $0.route = Route.feedsV1Edit
            configure(&$0)
        }
    }

    @Test func h27_presentOpensADialogAndAnswersPending() throws {
        var runner = Self.editSession()
        let applied = try runner.apply(Web.presentDeleteDialog)
        #expect(applied.outcome == .applied)
        #expect(applied.resolution == ["pending": .string(Self.firstCallId)])
        #expect(applied.trace == ["input:nativeDialog.present", "bridge:nativeDialog.present"])
        #expect(runner.session.view["dialog"] == [
            "callId": .string(Self.firstCallId), "title": "Delete this widget?",
            "actions": [["actionId": "delete", "title": "Delete", "role": "destructive"],
                        ["actionId": "keep", "title": "Keep"]],
        ])
    }

    @Test func h27_chooseSettlesTheCallWithTheAction() throws {
        var runner = Self.editSession()
        try runner.apply(Web.presentDeleteDialog)
        let chosen = try runner.apply(.gesture(.dialogChoose(actionId: "delete")))
        #expect(chosen.outcome == .applied)
        #expect(chosen.trace == ["input:dialog.choose", "resolution:nativeDialog.present"])
        #expect(chosen.entries(.resolution)[0].data == [
            "callId": .string(Self.firstCallId), "value": ["type": "action", "actionId": "delete"],
        ])
        #expect(runner.session.view["dialog"] == JSON.null)
        // Native never deletes anything itself: no request, no navigation, no emit.
        #expect(runner.entries(.emit) == [])
        #expect(runner.entries(.navigation).count == 1)
    }

    @Test func h27_dismissSettlesTheCallDismissedAndTheNextDialogHasANewCallId() throws {
        var runner = Self.editSession()
        try runner.apply(Web.presentDeleteDialog)
        let dismissed = try runner.apply(.gesture(.dialogDismiss))
        #expect(dismissed.trace == ["input:dialog.dismiss", "resolution:nativeDialog.present"])
        #expect(dismissed.entries(.resolution)[0].data == ["callId": .string(Self.firstCallId), "value": ["type": "dismissed"]])
        #expect(runner.session.view["dialog"] == JSON.null)
        let next = try runner.apply(Web.presentDeleteDialog)
        #expect(next.resolution == ["pending": .string(Self.secondCallId)])
    }

    @Test func h27_aSecondDialogWhileOneIsOpenIsBusy() throws {
        var runner = Self.editSession()
        try runner.apply(Web.presentDeleteDialog)
        let second = try runner.apply(Web.message([("type", "nativeDialog.present"), ("title", "Rename?"),
                                                   ("actions", [["actionId": "ok", "title": "OK"]])]))
        #expect(second.outcome == .applied)
        #expect(second.resolution == ["type": "busy"])
        #expect(second.trace == ["input:nativeDialog.present", "bridge:nativeDialog.present"])
        #expect(runner.session.view["dialog"]?["callId"] == .string(Self.firstCallId))
        #expect(runner.session.view["dialog"]?["title"] == "Delete this widget?")
        // The busy call took no call id: the open dialog still settles under the first one.
        let chosen = try runner.apply(.gesture(.dialogChoose(actionId: "keep")))
        #expect(chosen.entries(.resolution)[0].data == [
            "callId": .string(Self.firstCallId), "value": ["type": "action", "actionId": "keep"],
        ])
    }

    @Test func h27_withoutTheCapabilityTheDialogIsUnavailable() throws {
        var runner = SessionRunner.make()  // /embed/feeds/v1: no native_dialog.v1
        let applied = try runner.apply(Web.presentDeleteDialog)
        #expect(applied.outcome == .ignored(.capabilityNotAdvertised))
        #expect(applied.resolution == ["type": "unavailable"])
        #expect(applied.entries(.bridge)[0].data == ["outcome": "ignored", "reason": "capabilityNotAdvertised"])
        #expect(runner.session.view["dialog"] == JSON.null)
        #expect(applied.entries(.violation) == [])
    }

    @Test func h27_choosingAnActionTheDialogDoesNotOfferIsInvalidAndChangesNothing() throws {
        var runner = Self.editSession()
        try runner.apply(Web.presentDeleteDialog)
        let before = runner.session
        let timelineBefore = runner.timeline
        let error = runner.refused(.gesture(.dialogChoose(actionId: "archive")))
        #expect(invalidField(error!) == "actionId")
        #expect(runner.session == before)
        #expect(runner.timeline == timelineBefore)
        #expect(runner.session.view["dialog"]?["callId"] == .string(Self.firstCallId))
    }

    @Test func h27_dialogGesturesWithNoDialogOpenAreIgnored() throws {
        var runner = Self.editSession()
        let choose = try runner.apply(.gesture(.dialogChoose(actionId: "delete")))
        #expect(choose.outcome == .ignored(.noDialog))
        #expect(choose.trace == ["input:dialog.choose"])
        let dismiss = try runner.apply(.gesture(.dialogDismiss))
        #expect(dismiss.outcome == .ignored(.noDialog))
        #expect(dismiss.trace == ["input:dialog.dismiss"])
        // After a dialog settled, gestures find none either.
        try runner.apply(Web.presentDeleteDialog)
        try runner.apply(.gesture(.dialogDismiss))
        #expect(try runner.apply(.gesture(.dialogDismiss)).outcome == .ignored(.noDialog))
        #expect(runner.entries(.resolution).count == 1)
    }

    // MARK: H19, H20 close the sheet and the dialog

    static let sheetAndDialog = [Capability.liveWidgetCreation, Capability.nativeDialog]

    @Test func h27_h19_anAccountSwitchDismissesTheDialogAndClosesTheSheet() throws {
        var runner = Self.editSession { $0.capabilities = Self.sheetAndDialog }
        try runner.apply(Web.presentLiveWidgetCreation)
        try runner.apply(Web.presentDeleteDialog)
        try runner.apply(Web.link("today://chat?text=hi&msg_trigger_ele_id=w-1"))
        let switched = try runner.apply(.lifecycle(.accountSwitch(uid: "u2")))
        #expect(switched.outcome == .applied)
        #expect(switched.entries(.resolution).map(\.data) == [
            ["callId": .string(Self.firstCallId), "value": ["type": "dismissed"]],
        ])
        #expect(switched.entries(.analytics).map(\.type) == ["page_end", "page_view"])
        #expect(switched.trace.first == "input:accountSwitch")
        #expect(switched.trace[1] == "analytics:page_end")
        #expect(switched.trace.last == "analytics:page_view")
        #expect(runner.session.view["dialog"] == JSON.null)
        #expect(runner.session.view["liveWidgetSheet"] == "hidden")
        #expect(runner.session.view["chat"] == ["draft": nil, "pendingTriggerId": nil])
        #expect(try runner.apply(.gesture(.dialogDismiss)).outcome == .ignored(.noDialog))
        #expect(try runner.apply(.gesture(.liveWidgetCancelled)).outcome == .ignored(.noSheet))
    }

    @Test func h27_h20_teardownDismissesTheDialogAndClosesTheSheet() throws {
        var runner = Self.editSession { $0.capabilities = Self.sheetAndDialog }
        try runner.apply(Web.presentLiveWidgetCreation)
        try runner.apply(Web.presentDeleteDialog)
        let teardown = try runner.apply(.teardown)
        #expect(teardown.trace == ["input:teardown", "resolution:nativeDialog.present", "analytics:page_end"])
        #expect(teardown.entries(.resolution)[0].data == ["callId": .string(Self.firstCallId), "value": ["type": "dismissed"]])
        #expect(runner.session.view["status"] == "closed")
        #expect(runner.session.view["dialog"] == JSON.null)
        #expect(runner.session.view["liveWidgetSheet"] == "hidden")
        #expect(runner.refused(.gesture(.dialogDismiss)) == .sessionClosed)
    }

    // MARK: H28 Scroll to section

    @Test func h28_scrollToSectionEmitsExactlyThePayload() throws {
        var runner = SessionRunner.make()
        let applied = try runner.apply(.command(.scrollToSection(batchId: "b7", behavior: .auto, highlight: false)))
        #expect(applied.outcome == .applied)
        #expect(applied.resolution == .null)
        #expect(applied.trace == ["input:todayPage.scrollToSection", "emit:todayPage.scrollToSection"])
        let emit = applied.entries(.emit)[0]
        #expect(emit.requestId == nil)
        #expect(emit.data == [
            "payload": ["type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "b7", "behavior": "auto",
                        "highlight": false],
        ])
        let smooth = try runner.apply(.command(.scrollToSection(batchId: "batch-2", behavior: .smooth, highlight: true)))
        #expect(smooth.entries(.emit)[0].data["payload"] == [
            "type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "batch-2", "behavior": "smooth",
            "highlight": true,
        ])
        // A command has no reply and touches no UI.
        #expect(runner.pending == [])
        #expect(runner.timers == [])
        #expect(runner.session.version == 3)
    }

    @Test func h28_anEmptyBatchIdIsInvalidAndEmitsNothing() throws {
        var runner = SessionRunner.make()
        let before = runner.session
        let error = runner.refused(.command(.scrollToSection(batchId: "", behavior: .smooth, highlight: true)))
        #expect(invalidField(error!) == "batchId")
        #expect(runner.session == before)
        #expect(runner.entries(.emit) == [])
    }
}

package dev.todaysim.recorder

// The closed sets of values the recorder's calls take, each constant carrying the string the
// trace writes for it ([wire]): the same strings as todaysim's API and timeline entries.

/** The state the Today Page header entered (H12–H14): a `header` line's `type`. */
enum class HeaderState(val wire: String) {
    HIDDEN("hidden"), REFRESHING("refreshing"), UPDATED("updated"), FAILED("failed")
}

/** The state the pull spinner entered (H10, H11): a `pull` line's `type`. */
enum class PullState(val wire: String) {
    REFRESHING("refreshing"), IDLE("idle")
}

/** How the pull spinner's refresh ended, when it went [PullState.IDLE]: a `pull` line's `data.outcome`. */
enum class PullOutcome(val wire: String) {
    SUCCEEDED("succeeded"), FAILED("failed"), CANCELLED("cancelled"), UNSUPPORTED("unsupported"), UNKNOWN("unknown"),
    TIMED_OUT("timedOut")
}

/** The state the native loading overlay entered (H3, H23): an `overlay` line's `type`. */
enum class OverlayState(val wire: String) {
    VISIBLE("visible"), HIDDEN("hidden")
}

/** Why the WebView loaded a document: a `navigation` line's `type` (H3, H9, H10, H17–H19). */
enum class NavigationCause(val wire: String) {
    INITIAL("initial"), RECOVERY("recovery"), MANUAL_REPEAT("manualRepeat"), TERMINATION("termination"),
    ACCOUNT_SWITCH("accountSwitch"), NAVIGATION("navigation")
}

/**
 * A lifecycle input's `type` (H15–H20), as `POST /v1/sessions/{id}/lifecycle` takes it:
 * [NAVIGATION] carries `url`, [ACCOUNT_SWITCH] `uid`.
 */
enum class LifecycleType(val wire: String) {
    BACKGROUND("background"), FOREGROUND("foreground"), TAB_ACTIVATED("tabActivated"), SOCKET_EVENT("socketEvent"),
    TIMER_TICK("timerTick"), NAVIGATION("navigation"), WEB_CONTENT_TERMINATED("webContentTerminated"),
    ACCOUNT_SWITCH("accountSwitch"), TEARDOWN("teardown")
}

/**
 * A gesture input's `type` (H10, H25–H27), as `POST /v1/sessions/{id}/gestures` takes it:
 * [CHAT_EDIT] carries `text`, [DIALOG_CHOOSE] `actionId`.
 */
enum class GestureType(val wire: String) {
    PULL("pull"), CHAT_EDIT("chat.edit"), CHAT_SEND("chat.send"), LIVE_WIDGET_CREATED("liveWidget.created"),
    LIVE_WIDGET_CANCELLED("liveWidget.cancelled"), DIALOG_CHOOSE("dialog.choose"), DIALOG_DISMISS("dialog.dismiss")
}

/// What a coordinator answers to an event. Most leave a trace on the timeline: the session
/// stamps each with `seq` and the clock and appends it (API: timeline entry kinds). Each names
/// the rule that made it: given by the caller where several rules make the same change (a
/// header hidden by its result, a navigation or a deadline), else following from the effect
/// itself. The commands after them leave no entry of their own: the session carries them out
/// (`HostSession.perform`), which is how one coordinator's answer reaches another.
package enum Effect: Equatable, Sendable {
    /// A native → Web message, exactly as Web receives it.
    case emit(type: String, requestId: String?, payload: JSON, rule: Rule)
    case navigation(loadId: Int, url: String, cause: LoadCause, requestId: String?)
    /// A native request reached its end. `reason` is the request's refresh reason.
    case requestSettled(requestId: String, outcome: RequestOutcome, reason: RefreshReason?, rule: Rule)
    case header(from: HeaderRenderer.Phase, to: HeaderRenderer.Phase, requestId: String?, rule: Rule)
    /// The spinner started, moved to another id, or ended (`outcome` set when it ended).
    case pull(state: PullSpinner.Phase, outcome: RequestOutcome?, requestId: String?, rule: Rule)
    case overlay(from: OverlayState, to: OverlayState)
    case watchdog(kind: TimerKind, requestId: String?, lateMs: Millis?)
    case analytics(event: String, properties: JSON)
    case violation(code: String, detail: String, requestId: String?)
    /// A pending bridge call settled (H27).
    case resolution(type: String, callId: String, value: JSON)

    // Commands.

    /// The event changed nothing: the input's outcome is `ignored` with this reason.
    case ignored(IgnoreReason)
    /// What the bridge call returns to Web at once (H21, H26, H27).
    case answer(JSON)
    /// A host analytics event with the session's base properties (H15, H19, H24).
    case hostAnalytics(event: String)
    /// H4, H5: a native soft request, under `requestId` or (`nil`) a new server-made id.
    case requestSoftRefresh(reason: RefreshReason?, requestId: String?)
    /// H9, H10, H18: the host reloads its own document, under `requestId` or (`nil`) a new
    /// server-made id; a spinner still up for another id follows it (H11).
    case reload(cause: LoadCause, requestId: String?)
    /// A result that made no reload reaches the spinner and the header (H11, H13).
    case feedbackSettled(requestId: String, status: ResultStatus)
    /// H6: the deadline passed and made no reload: the spinner and the header that own these
    /// ids end.
    case feedbackTimedOut(requestIds: [String])
    /// H18: a failure that made no reload ends the spinner.
    case endPull(RequestOutcome)
}

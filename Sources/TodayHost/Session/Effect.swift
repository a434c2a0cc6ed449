/// Something a coordinator did that leaves a trace on the timeline. The session stamps each
/// with `seq` and the clock and appends it (API: timeline entry kinds). Each names the rule
/// that made it: given by the caller where several rules make the same change (a header hidden
/// by its result, a navigation or a deadline), else following from the effect itself.
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
}

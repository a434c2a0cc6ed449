/// Something a coordinator did that leaves a trace on the timeline. The session stamps each
/// with `seq` and the clock and appends it (API: timeline entry kinds).
public enum Effect: Equatable, Sendable {
    /// A native → Web message, exactly as Web receives it.
    case emit(type: String, requestId: String?, payload: JSON)
    case navigation(loadId: Int, url: String, cause: LoadCause, requestId: String?)
    /// A native request reached its end. `reason` is the request's refresh reason.
    case requestSettled(requestId: String, outcome: RequestOutcome, reason: RefreshReason?)
    case header(from: HeaderRenderer.Phase, to: HeaderRenderer.Phase, requestId: String?)
    /// The spinner started, moved to another id, or ended (`outcome` set when it ended).
    case pull(state: PullSpinner.Phase, outcome: RequestOutcome?, requestId: String?)
    case overlay(from: OverlayState, to: OverlayState)
    case watchdog(kind: TimerKind, requestId: String?, lateMs: Millis?)
    case analytics(event: String, properties: JSON)
    case violation(code: String, detail: String, requestId: String?)
    /// A pending bridge call settled (H27).
    case resolution(type: String, callId: String, value: JSON)
}

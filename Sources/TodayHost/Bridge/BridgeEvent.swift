/// A Web → native bridge message after parsing (H21): only well-formed known events exist here.
public enum BridgeEvent: Equatable, Sendable {
    case refreshStarted(requestId: String)
    case refreshResult(RefreshResult)
    case firstBatchRendered(batchId: String, elapsedMs: Double, requestId: String?)
    case allBatchesRendered(status: RenderStatus, empty: Bool, elapsedMs: Double, requestId: String?)
    case loadFailed(error: String, elapsedMs: Double, requestId: String?)
    case loadingPresentation(owner: String, reason: String?)
    /// H24: an analytics event for native to enrich and forward.
    case track(event: String, properties: JSON?)
    /// H25: a link Web navigates to.
    case navigationAction(url: String)
    /// H26.
    case liveWidgetCreationPresent
    /// H27.
    case nativeDialogPresent(title: String, actions: [DialogAction])

    public struct DialogAction: Codable, Equatable, Sendable {
        public var actionId: String
        public var title: String
        public var role: String?

        public var json: JSON {
            var members: [(String, JSON)] = [("actionId", .string(actionId)), ("title", .string(title))]
            if let role { members.append(("role", .string(role))) }
            return .object(members)
        }
    }

    public enum RenderStatus: String, Sendable, Equatable {
        case succeeded, partial
    }

    public struct RefreshResult: Equatable, Sendable {
        public enum Mode: String, Sendable, Equatable {
            case hard, soft
        }

        public var requestId: String
        public var mode: Mode
        public var status: ResultStatus
        public var loadId: String?
        public var terminalEvent: String?
        public var elapsedMs: Double?
        public var error: JSON?
    }
}

/// What the bridge boundary made of a raw message.
public enum BridgeParse: Equatable, Sendable {
    case event(BridgeEvent)
    /// Unknown to this host (unknown type, or a capability it does not advertise).
    case ignored(IgnoreReason)
    /// A known event that breaks its shape; it never reaches a coordinator (H21).
    case rejected(BridgeRejection)
}

/// Which field of a known event broke and how.
public struct BridgeRejection: Error, Equatable, Sendable {
    public var field: String
    public var problem: String

    public var reason: String { "\(field): \(problem)" }
}

/// The camelCase codes of an `ignored` outcome (H21).
public enum IgnoreReason: String, Sendable, Equatable {
    case unknownEvent, capabilityNotAdvertised, staleResult, staleRender, alreadyBackground, alreadyForeground,
        noTimer, noDialog, noDraft, noSheet, untrustedLink, ownerNotWeb, alreadyReleased
}

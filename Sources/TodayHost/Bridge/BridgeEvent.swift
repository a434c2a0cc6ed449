/// A Web → native bridge message after parsing (H21): only well-formed known events exist here.
package enum BridgeEvent: Equatable, Sendable {
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

    package struct DialogAction: Codable, Equatable, Sendable {
        package var actionId: String
        package var title: String
        package var role: String?

        package var json: JSON {
            var members: [(String, JSON)] = [("actionId", .string(actionId)), ("title", .string(title))]
            if let role { members.append(("role", .string(role))) }
            return .object(members)
        }
    }

    package enum RenderStatus: String, Sendable, Equatable {
        case succeeded, partial
    }

    package struct RefreshResult: Equatable, Sendable {
        package enum Mode: String, Sendable, Equatable {
            case hard, soft
        }

        package var requestId: String
        package var mode: Mode
        package var status: ResultStatus
        package var loadId: String?
        package var terminalEvent: String?
        package var elapsedMs: Double?
        package var error: JSON?
    }
}

/// What the bridge boundary made of a raw message.
package enum BridgeParse: Equatable, Sendable {
    case event(BridgeEvent)
    /// Unknown to this host (unknown type, or a capability it does not advertise).
    case ignored(IgnoreReason)
    /// A known event that breaks its shape; it never reaches a coordinator (H21).
    case rejected(BridgeRejection)
}

/// Which field of a known event broke and how.
package struct BridgeRejection: Error, Equatable, Sendable {
    package var field: String
    package var problem: String

    package var reason: String { "\(field): \(problem)" }
}

/// The camelCase codes of an `ignored` outcome (H21).
package enum IgnoreReason: String, Sendable, Equatable {
    case unknownEvent, capabilityNotAdvertised, staleResult, staleRender, alreadyBackground, alreadyForeground,
        noTimer, noDialog, noDraft, noSheet, untrustedLink, ownerNotWeb, alreadyReleased
}

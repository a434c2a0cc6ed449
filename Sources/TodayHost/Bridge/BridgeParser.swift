/// The bridge boundary (H21): turns a raw Web message into a typed event, or says why not.
/// What the host understands depends on what it advertised (H12) and on its loading gate (H23).
package struct BridgeParser: Sendable {
    package var capabilities: [String]
    package var loadingGate: LoadingGate

    package init(capabilities: [String], loadingGate: LoadingGate) {
        self.capabilities = capabilities
        self.loadingGate = loadingGate
    }

    /// `type` is the message's `type`, already known to be a string.
    package func parse(type: String, message: JSON) -> BridgeParse {
        let fields = BridgeFields(message: message)
        do throws(BridgeRejection) {
            switch type {
            case "todayPage.refreshStarted":
                // A host without the capability does not know the event, whatever its form (M2).
                guard capabilities.contains(Capability.revalidateFeedback) else {
                    return .ignored(.capabilityNotAdvertised)
                }
                try fields.schemaVersion(required: true)
                let requestId = try fields.nonEmptyString("requestId")
                try fields.literal("presentation", allowed: ["header"])
                return .event(.refreshStarted(requestId: requestId))
            case "todayPage.refreshResult":
                return .event(.refreshResult(try refreshResult(fields)))
            case "todayPage.firstBatchRendered":
                try fields.schemaVersion(required: true)
                return .event(.firstBatchRendered(
                    batchId: try fields.nonEmptyString("batchId"),
                    elapsedMs: try fields.elapsedMs(required: true)!,
                    requestId: try fields.optionalString("requestId")))
            case "todayPage.allBatchesRendered":
                try fields.schemaVersion(required: true)
                let status = try fields.literal("status", allowed: ["succeeded", "partial"])
                return .event(.allBatchesRendered(
                    status: BridgeEvent.RenderStatus(rawValue: status)!,
                    empty: try fields.bool("empty"),
                    elapsedMs: try fields.elapsedMs(required: true)!,
                    requestId: try fields.optionalString("requestId")))
            case "todayPage.loadFailed":
                try fields.schemaVersion(required: true)
                return .event(.loadFailed(
                    error: try fields.string("error"),
                    elapsedMs: try fields.elapsedMs(required: true)!,
                    requestId: try fields.optionalString("requestId")))
            case "webView.loadingPresentation":
                // A host that has not adopted the event does not know it (H23).
                guard loadingGate == .presentation else { return .ignored(.unknownEvent) }
                try fields.schemaVersion(required: false)
                return .event(.loadingPresentation(
                    owner: try fields.string("owner"), reason: try fields.optionalString("reason")))
            case "track":
                try fields.schemaVersion(required: false)
                return .event(.track(event: try fields.nonEmptyString("event"),
                                     properties: try fields.optionalObject("properties")))
            case "webView.navigationAction":
                try fields.schemaVersion(required: false)
                return .event(.navigationAction(url: try fields.string("url")))
            case "liveWidgetCreation.present":
                try fields.schemaVersion(required: false)
                return .event(.liveWidgetCreationPresent)
            case "nativeDialog.present":
                try fields.schemaVersion(required: false)
                return .event(.nativeDialogPresent(title: try fields.string("title"), actions: try fields.dialogActions()))
            default:
                return .ignored(.unknownEvent)
            }
        } catch {
            return .rejected(error)
        }
    }

    private func refreshResult(_ fields: BridgeFields) throws(BridgeRejection) -> BridgeEvent.RefreshResult {
        try fields.schemaVersion(required: true)
        let requestId = try fields.nonEmptyString("requestId")
        let mode = try fields.literal("mode", allowed: ["hard", "soft"])
        let status = try fields.string("status")
        return BridgeEvent.RefreshResult(
            requestId: requestId,
            mode: BridgeEvent.RefreshResult.Mode(rawValue: mode)!,
            status: ResultStatus(status),
            loadId: try fields.optionalString("loadId"),
            terminalEvent: try fields.optionalString("terminalEvent"),
            elapsedMs: try fields.elapsedMs(required: false),
            error: try fields.optionalObject("error"))
    }
}

/// Request bodies → the engine's typed inputs (API: Endpoints). The HTTP endpoints and a host
/// trace's input lines decode with these, so both refuse the same bodies the same way. Each takes
/// the body already parsed (`BodyFields.object(from:)`, once per request: its unknown fields are
/// checked on the same value).
package enum InputDecoding {
    /// One endpoint's decoder.
    package typealias Decode = @Sendable (BodyFields) throws(InputProblem) -> Input

    /// The decoder of the endpoint a `/steps` element's key (an input's `via`) names.
    package static func decoder(forChannel channel: String) -> Decode? {
        switch channel {
        case "gesture": return gesture
        case "lifecycle": return lifecycle
        case "webEvent": return webEvent
        case "command": return command
        case "clock": return clock
        default: return nil
        }
    }

    /// `POST /v1/sessions`.
    package static func creation(_ fields: BodyFields) throws(InputProblem) -> (id: String?, config: SessionConfig, ttlMs: Millis?) {
        guard let uid = try fields.identifier("uid") else { throw .invalidField("uid", "is required") }
        var config = SessionConfig(uid: uid)
        let id = try fields.string("id")
        if let id, !HostSession.isValidId(id) {
            throw .invalidField("id", HostSession.idRule)
        }
        config.label = try fields.identifier("label")
        config.language = try fields.identifier("language") ?? config.language
        config.platform = try fields.oneOf("platform", Platform.self) ?? config.platform
        config.route = try fields.identifier("route") ?? config.route
        config.loadingGate = try fields.oneOf("loadingGate", LoadingGate.self) ?? config.loadingGate
        config.capabilities = try fields.identifiers("capabilities")
        config.clock = try fields.oneOf("clock", ClockMode.self) ?? config.clock
        if let timing = try fields.nested("timing") {
            for (key, keyPath) in Timing.fieldKeyPaths {
                if let value = try timing.integer(key) { config.timing[keyPath: keyPath] = value }
            }
        }
        if let analytics = try fields.nested("analytics") {
            config.analytics = AnalyticsBase(did: try analytics.identifier("did"), sid: try analytics.identifier("sid"),
                                             client_plat: try analytics.identifier("client_plat"), ctx: try analytics.payload("ctx"))
        }
        do throws(InputError) { try config.validate() } catch { throw InputProblem(error) }
        if let problem = FieldLimits.sizeProblem(config.json, limit: FieldLimits.inputBytes) {
            throw .invalidField("body", "the session's settings \(problem)")
        }
        let ttlMs = try fields.integer("ttlMs")
        if let ttlMs, ttlMs <= 0 { throw .invalidField("ttlMs", "must be a positive integer") }
        return (id, config, ttlMs)
    }

    /// `POST …/gestures`.
    package static func gesture(_ fields: BodyFields) throws(InputProblem) -> Input {
        let type = try inputType(fields)
        let requestId = try fields.identifier("requestId")
        switch type {
        case "pull": return .gesture(.pull(requestId: requestId))
        case "liveWidget.created": return .gesture(.liveWidgetCreated(requestId: requestId))
        case "liveWidget.cancelled": return .gesture(.liveWidgetCancelled)
        case "chat.edit":
            guard let text = try fields.text("text") else { throw .invalidField("text", "is required") }
            return .gesture(.chatEdit(text: text))
        case "chat.send": return .gesture(.chatSend)
        case "dialog.choose":
            guard let actionId = try fields.nonEmptyIdentifier("actionId") else { throw .invalidField("actionId", "is required") }
            return .gesture(.dialogChoose(actionId: actionId))
        case "dialog.dismiss": return .gesture(.dialogDismiss)
        default: throw ControlBody.gesture.unknownType(type)
        }
    }

    /// `POST …/lifecycle`.
    package static func lifecycle(_ fields: BodyFields) throws(InputProblem) -> Input {
        let type = try inputType(fields)
        let requestId = try fields.identifier("requestId")
        switch type {
        case "background": return .lifecycle(.background)
        case "foreground": return .lifecycle(.foreground(requestId: requestId))
        case "tabActivated": return .lifecycle(.tabActivated(requestId: requestId))
        case "socketEvent": return .lifecycle(.socketEvent(requestId: requestId))
        case "timerTick": return .lifecycle(.timerTick(requestId: requestId))
        case "navigation": return .lifecycle(.navigation(url: try fields.text("url")))
        case "webContentTerminated": return .lifecycle(.webContentTerminated(requestId: requestId))
        case "accountSwitch":
            guard let uid = try fields.nonEmptyIdentifier("uid") else { throw .invalidField("uid", "is required") }
            return .lifecycle(.accountSwitch(uid: uid))
        case "teardown": return .teardown
        default: throw ControlBody.lifecycle.unknownType(type)
        }
    }

    /// `POST …/web-events`: the bridge message as Web emitted it, within its limits (decided
    /// here, so an oversized field is the client's `400`, never the bridge's `rejected`).
    package static func webEvent(_ fields: BodyFields) throws(InputProblem) -> Input {
        guard fields.object["type"]?.stringValue != nil else {
            throw .invalidField("type", "a bridge message needs a string type")
        }
        try WebEventLimits.check(fields.object)
        return .webEvent(fields.object)
    }

    /// `POST …/commands` (H28): defaults filled in, so the payload Web receives is complete.
    package static func command(_ fields: BodyFields) throws(InputProblem) -> Input {
        let type = try inputType(fields)
        switch type {
        case "todayPage.scrollToSection":
            // The API's `schemaVersion?: 1`: the payload Web receives always says 1.
            if let version = try fields.integer("schemaVersion"), version != 1 {
                throw .invalidField("schemaVersion", "must be 1 (or left out), got \(version)")
            }
            guard let batchId = try fields.nonEmptyIdentifier("batchId") else { throw .invalidField("batchId", "is required") }
            let behavior = try fields.oneOf("behavior", Command.ScrollBehavior.self) ?? .smooth
            let highlight = try fields.bool("highlight") ?? true
            return .command(.scrollToSection(batchId: batchId, behavior: behavior, highlight: highlight))
        default:
            throw ControlBody.command.unknownType(type)
        }
    }

    /// `POST …/clock`: exactly one of `advanceMs`, `toMs`, `toNextTimer`, `runUntilIdle` (C2).
    package static func clock(_ fields: BodyFields) throws(InputProblem) -> Input {
        let moves = ["advanceMs", "toMs", "toNextTimer", "runUntilIdle"]
        let keys = moves.filter { fields.present($0) != nil }
        let oneOf = "give exactly one of \(moves.joined(separator: ", "))"
        // No move at all is the body's fault, not that of a field the caller never sent.
        guard let key = keys.first else { throw .invalidField("body", "\(oneOf); none was given") }
        guard keys.count == 1 else { throw .invalidField(keys[1], "cannot go with \(key): \(oneOf)") }
        switch key {
        case "advanceMs":
            let delta = try fields.integer(key)!
            guard delta >= 0 else { throw .invalidField(key, "must be a non-negative integer") }
            return .clock(.advanceBy(delta))
        case "toMs":
            return .clock(.advanceTo(try fields.integer(key)!))
        default:
            guard try fields.bool(key) == true else { throw .invalidField(key, "must be true") }
            return .clock(key == "toNextTimer" ? .toNextTimer : .runUntilIdle)
        }
    }

    private static func inputType(_ fields: BodyFields) throws(InputProblem) -> String {
        guard let type = try fields.identifier("type") else { throw .invalidField("type", "is required") }
        return type
    }
}

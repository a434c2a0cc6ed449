/// The session view of the API, in its documented field order. It is written straight to
/// bytes (it is encoded on every write and every uncached read); `view` reads those bytes back
/// as a `JSON` value for everything else.
extension HostSession {
    package var view: JSON {
        // The writer below produces valid JSON by construction; a failure is a broken invariant.
        guard let value = try? JSON.parse(bytes: viewBytes) else { preconditionFailure("the view writer made invalid JSON") }
        return value
    }

    package var viewBytes: [UInt8] {
        var out = JSONOutput()
        writeView(to: &out)
        return out.bytes
    }

    package func writeView(to out: inout JSONOutput) {
        out.beginObject()
        out.field("id", id)
        out.field("uid", uid)
        out.field("label", config.label)
        out.field("status", isClosed ? "closed" : "active")
        out.field("platform", config.platform.rawValue)
        out.field("route", config.route)
        out.field("language", config.language)
        out.field("loadingGate", config.loadingGate.rawValue)
        out.key("capabilities")
        out.strings(injectedCapabilities)
        out.field("version", version)
        out.key("clock")
        out.beginObject()
        out.field("mode", config.clock.rawValue)
        out.field("nowMs", nowMs)
        out.endObject()
        out.key("app")
        out.beginObject()
        out.field("state", app.isForeground ? "foreground" : "background")
        out.field("backgroundedAtMs", app.backgroundedAtMs)
        out.endObject()
        out.key("document")
        writeDocument(to: &out)
        out.key("header")
        out.beginObject()
        out.field("state", header.phase.rawValue)
        out.field("requestId", header.requestId)
        out.endObject()
        out.key("pull")
        out.beginObject()
        out.field("state", pull.phase.rawValue)
        out.field("requestId", pull.owner)
        out.field("lastOutcome", pull.lastOutcome?.rawValue)
        out.field("lastGestureAtMs", manualWindow.lastGestureAtMs)
        out.endObject()
        out.key("refresh")
        out.beginObject()
        out.key("pending")
        out.beginArray()
        for request in refresh.pending {
            out.beginObject()
            out.field("requestId", request.requestId)
            out.field("reason", request.reason?.rawValue)
            out.field("requestedAtMs", request.requestedAtMs)
            out.endObject()
        }
        out.endArray()
        out.field("deadlineAtMs", refresh.deadline?.dueAtMs)
        out.field("recoveryArmed", recovery.armed)
        out.endObject()
        out.key("chat")
        out.beginObject()
        out.field("draft", chat.draft)
        out.field("pendingTriggerId", chat.pendingTriggerId)
        out.endObject()
        out.field("liveWidgetSheet", liveWidgetSheet.state.rawValue)
        out.key("dialog")
        writeDialog(to: &out)
        out.key("watchdogs")
        out.beginArray()
        for watchdog in watchdogs { watchdog.write(to: &out) }
        out.endArray()
        out.key("timing")
        out.beginObject()
        for (name, value) in config.timing.fields { out.field(name, value) }
        out.endObject()
        out.key("counts")
        out.beginObject()
        out.field("timeline", lastSeq)
        out.field("violations", violationCount)
        out.endObject()
        out.endObject()
    }

    private func writeDocument(to out: inout JSONOutput) {
        out.beginObject()
        out.field("loadId", document.loadId)
        out.field("url", document.url)
        out.field("requestId", document.requestId)
        out.field("awaitingResult", document.awaitingResult)
        out.field("state", document.state.rawValue)
        out.field("overlay", document.overlay.state.rawValue)
        out.field("cause", document.cause.rawValue)
        out.key("injected")
        out.beginObject()
        out.field("platform", config.platform.rawValue)
        out.field("surface", "embedded")
        out.key("capabilities")
        out.strings(injectedCapabilities)
        out.endObject()
        out.endObject()
    }

    private func writeDialog(to out: inout JSONOutput) {
        guard let open = dialog.open else {
            out.null()
            return
        }
        out.beginObject()
        out.field("callId", open.callId)
        out.field("title", open.title)
        out.key("actions")
        out.beginArray()
        for action in open.actions {
            out.beginObject()
            out.field("actionId", action.actionId)
            out.field("title", action.title)
            if let role = action.role { out.field("role", role) }
            out.endObject()
        }
        out.endArray()
        out.endObject()
    }
}

extension Watchdog {
    package var json: JSON {
        ["kind": .string(kind.rawValue), "requestId": .string(requestId), "dueAtMs": .int(dueAtMs)]
    }

    func write(to out: inout JSONOutput) {
        out.beginObject()
        out.field("kind", kind.rawValue)
        out.field("requestId", requestId)
        out.field("dueAtMs", dueAtMs)
        out.endObject()
    }
}

extension SessionConfig {
    /// The creation input as the timeline records it, defaults filled in.
    package var json: JSON {
        var members: [(String, JSON)] = [
            ("uid", .string(uid)), ("label", .string(label)), ("language", .string(language)),
            ("platform", .string(platform.rawValue)), ("route", .string(route)),
            ("loadingGate", .string(loadingGate.rawValue)),
        ]
        members.append(("capabilities", capabilities.map(JSON.strings) ?? .null))
        members.append(("clock", .string(clock.rawValue)))
        members.append(("timing", .object(timing.fields.map { ($0.0, .int($0.1)) })))
        let base = analytics.properties(uid: uid).dropFirst()
        members.append(("analytics", .object(Array(base))))
        return .object(members)
    }
}

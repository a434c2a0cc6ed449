import Foundation
import TodayHost

/// SplitMix64 (Steele, Lea and Flood, 2014): the same sequence for a seed on every platform, so
/// a failing seed replays exactly.
package struct SeededRandom: Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `0..<bound`.
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    package mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    package mutating func pick<Element>(_ elements: [Element]) -> Element { elements[below(elements.count)] }

    /// An upper-case random UUID, as a real host mints its request ids.
    package mutating func upperCaseUUID() -> String {
        let hex = Array("0123456789ABCDEF")
        var digits = (0..<32).map { _ in hex[below(16)] }
        digits[12] = "4"
        digits[16] = hex[8 + below(4)]
        let text = String(digits)
        let cuts = [0, 8, 12, 16, 20, 32].map { text.index(text.startIndex, offsetBy: $0) }
        return (0..<5).map { String(text[cuts[$0]..<cuts[$0 + 1]]) }.joined(separator: "-")
    }
}

/// One random session as a host would live it (issue 33): every input kind, bursts of 2–6
/// inputs in one millisecond, answers to open, stale and late ids, Web-minted header ids, clock
/// moves on the rules' edges, dialogs, account switches, termination and teardown. Only server-
/// made request ids mostly (a caller's now and then), so binding has work to do.
package struct TraceScenario: Sendable {
    package var seed: UInt64
    package var sessionId: String
    package var config: SessionConfig
    /// The inputs as drawn; a few may be refused by the session (they leave no line).
    package var steps: [Input]

    /// The clock moves that sit on the rules' edges with default timing: the 5 s deadline and
    /// foreground threshold, the 10 s repeat window, the 12 s pull watchdog.
    package static let edges: [Millis] = [4_999, 5_000, 5_001, 10_000, 12_000]

    package init(seed: UInt64, sessionId: String, config: SessionConfig, steps: [Input]) {
        self.seed = seed
        self.sessionId = sessionId
        self.config = config
        self.steps = steps
    }

    /// Draws a scenario for `seed`, deciding each input on the session as it stands.
    package static func draw(seed: UInt64) -> TraceScenario {
        var draw = Drawing(rng: SeededRandom(seed: seed))
        let bursts = 3 + draw.rng.below(10)
        let config = draw.config()
        let id = "p\(seed)"
        var runner = try! SessionRunner(id: id, config: config)
        var steps: [Input] = []
        func take(_ input: Input) {
            steps.append(input)
            _ = try? runner.apply(input)
        }
        for _ in 0..<bursts {
            guard !runner.session.isClosed else { break }
            let size = draw.rng.chance(35) ? 2 + draw.rng.below(5) : 1
            for _ in 0..<size { take(draw.input(for: runner)) }
            take(draw.clockMove(for: runner))
        }
        if !runner.session.isClosed, draw.rng.chance(15) { take(.teardown) }
        return TraceScenario(seed: seed, sessionId: id, config: config, steps: steps)
    }

    /// The session after every step (a refused input changes nothing and leaves no line).
    package func run(sessionId: String? = nil) -> SessionRunner {
        var runner = try! SessionRunner(id: sessionId ?? self.sessionId, config: config)
        for step in steps { _ = try? runner.apply(step) }
        return runner
    }
}

/// The choices behind a scenario.
struct Drawing {
    var rng: SeededRandom
    private var counter = 0

    init(rng: SeededRandom) { self.rng = rng }

    mutating func config() -> SessionConfig {
        var config = SessionConfig(uid: "u1")
        config.route = rng.pick([Route.feedsV1, Route.feedsV1, Route.feedsV3])
        if rng.chance(10) { config.capabilities = [] }
        if rng.chance(25) { config.loadingGate = .render }
        if rng.chance(15) {
            // Tight timings that tie with each other and with the clock moves.
            config.drawTimings(from: [100, 500, 1000, 5000], &rng)
        }
        return config
    }

    private mutating func fresh(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)-\(counter)"
    }

    /// Every request id the session has made or been told, in a stable order.
    private func known(_ runner: SessionRunner) -> [String] { runner.ledger.records.keys.sorted() }

    /// Mostly none (the host mints it), now and then a caller's.
    private mutating func callerId() -> String? { rng.chance(12) ? fresh("c") : nil }

    /// An id for Web to name: an open request's, the header's, the spinner's, the document's,
    /// any seen (stale), or one Web mints itself.
    private mutating func webId(_ runner: SessionRunner) -> String {
        let session = runner.session
        let choice: String?
        switch rng.below(12) {
        case 0...3: choice = session.refresh.pending.isEmpty ? nil : rng.pick(session.refresh.pending).requestId
        case 4: choice = session.header.requestId
        case 5: choice = session.pull.owner
        case 6: choice = session.document.requestId
        case 7...9: choice = known(runner).isEmpty ? nil : rng.pick(known(runner))
        default: choice = nil
        }
        return choice ?? fresh("w")
    }

    mutating func input(for runner: SessionRunner) -> Input {
        switch rng.below(100) {
        case 0..<7: return .gesture(.pull(requestId: callerId()))
        case 7..<11: return .gesture(.liveWidgetCreated(requestId: callerId()))
        case 11..<13: return .gesture(.liveWidgetCancelled)
        case 13..<15: return .webEvent(["type": "liveWidgetCreation.present"])
        case 15..<18: return .lifecycle(.background)
        case 18..<22: return .lifecycle(.foreground(requestId: callerId()))
        case 22..<25: return .lifecycle(.tabActivated(requestId: callerId()))
        case 25..<27: return .lifecycle(.socketEvent(requestId: callerId()))
        case 27..<29: return .lifecycle(.timerTick(requestId: callerId()))
        case 29..<31: return .lifecycle(.navigation(url: rng.pick([nil, "/embed/feeds/v3?language=en&uid=u1"])))
        case 31..<33: return .lifecycle(.webContentTerminated(requestId: callerId()))
        case 33..<35: return .lifecycle(.accountSwitch(uid: rng.pick(["u1", "u2", "u3"])))
        case 35..<45:
            let id = webId(runner)
            return .webEvent(["type": "todayPage.refreshStarted", "schemaVersion": 1, "requestId": .string(id), "presentation": "header"])
        case 45..<63:
            let id = runner.session.header.owner.flatMap { rng.chance(30) ? $0 : nil } ?? webId(runner)
            let status = rng.pick(["succeeded", "succeeded", "failed", "cancelled", "unsupported"])
            return .webEvent(["type": "todayPage.refreshResult", "schemaVersion": 1, "requestId": .string(id),
                              "mode": .string(rng.pick(["soft", "hard"])), "status": .string(status)])
        case 63..<67:
            var members: [(String, JSON)] = [("type", "todayPage.firstBatchRendered"), ("schemaVersion", 1), ("batchId", "b1"), ("elapsedMs", 120)]
            if rng.chance(50) { members.append(("requestId", .string(webId(runner)))) }
            return .webEvent(.object(members))
        case 67..<70:
            var members: [(String, JSON)] = [("type", "todayPage.allBatchesRendered"), ("schemaVersion", 1), ("status", "succeeded"),
                                             ("empty", .bool(rng.chance(30))), ("elapsedMs", 300)]
            if rng.chance(50) { members.append(("requestId", .string(webId(runner)))) }
            return .webEvent(.object(members))
        case 70..<72:
            return .webEvent(["type": "todayPage.loadFailed", "schemaVersion": 1, "error": "network", "elapsedMs": 80])
        case 72..<75:
            return .webEvent(["type": "webView.loadingPresentation", "owner": .string(rng.pick(["web", "web", "native"])),
                              "reason": "placeholders_visible"])
        case 75..<79:
            return .webEvent(["type": "track", "event": .string(rng.pick(["tap", "card_view", "chat_query_submit"])),
                              "properties": ["x": .int(rng.below(3))]])
        case 79..<82:
            return .webEvent(["type": "webView.navigationAction",
                              "url": .string(rng.pick(["today://chat?q=hi&msg_trigger_ele_id=card-\(rng.below(3))", "https://example.com/x"]))])
        case 82..<84: return .gesture(.chatEdit(text: rng.pick(["hi", "hello"])))
        case 84..<86: return .gesture(.chatSend)
        case 86..<90:
            return .webEvent(["type": "nativeDialog.present", "title": "Remove?",
                              "actions": [["actionId": "ok", "title": "OK"], ["actionId": "cancel", "title": "Cancel", "role": "cancel"]]])
        case 90..<93: return .gesture(.dialogChoose(actionId: rng.pick(["ok", "cancel", "nope"])))
        case 93..<95: return .gesture(.dialogDismiss)
        default:
            return .command(.scrollToSection(batchId: "b\(rng.below(3))", behavior: rng.pick([.auto, .smooth]), highlight: rng.chance(50)))
        }
    }

    /// Mostly short moves (answers arrive within the deadline), some on the rules' edges, some
    /// to the next timer.
    mutating func clockMove(for runner: SessionRunner) -> Input {
        switch rng.below(10) {
        case 0...4: return .clock(.advanceBy(Millis(rng.below(rng.chance(50) ? 120 : 1_500))))
        case 5...7: return .clock(.advanceBy(rng.pick(TraceScenario.edges)))
        case 8: return .clock(.toNextTimer)
        default: return .clock(.advanceBy(Millis(rng.below(13_000))))
        }
    }
}

/// The run's settings, from the environment: `TODAYSIM_TRACE_SEED` replays a run (its seed is
/// printed), `TODAYSIM_TRACE_SESSIONS` sets how many sessions (2,000 by default; the sanitizer
/// runs set fewer), `TODAYSIM_TRACE_DUMP=DIR` writes each shrunk failing trace there.
package struct TracePropertyRun: Sendable {
    package var seed: UInt64
    package var sessions: Int
    package var dumpFolder: String?
    /// `TODAYSIM_TRACE_SHRINK=0`: failures are shown as found, not shrunk.
    package var shrinks: Bool

    package init(environment: [String: String]) {
        seed = environment["TODAYSIM_TRACE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        sessions = environment["TODAYSIM_TRACE_SESSIONS"].flatMap { Int($0) } ?? 2_000
        dumpFolder = environment["TODAYSIM_TRACE_DUMP"]
        shrinks = environment["TODAYSIM_TRACE_SHRINK"] != "0"
    }

    /// This process's run: the property test and its over-HTTP part draw the same sessions
    /// (one seed, printed by both).
    package static let shared = TracePropertyRun(environment: ProcessInfo.processInfo.environment)

    /// The scenario of session `index` of the run.
    package func scenario(_ index: Int) -> TraceScenario { TraceScenario.draw(seed: seed &+ UInt64(index)) }
}

extension Input {
    /// The endpoint under `/v1/sessions/{id}/` that takes this input, and its body.
    package var endpoint: (path: String, body: JSON) {
        switch channel {
        case "gesture": return ("gestures", json)
        case "webEvent": return ("web-events", json)
        case "command": return ("commands", json)
        case "clock": return ("clock", json)
        default: return ("lifecycle", json)
        }
    }
}

extension SessionConfig {
    /// Every timing drawn from `choices`, always in the same order (the same draws for a seed).
    package mutating func drawTimings(from choices: [Millis], _ rng: inout SeededRandom) {
        timing.pullWatchdogMs = rng.pick(choices)
        timing.headerWatchdogMs = rng.pick(choices)
        timing.softRefreshDeadlineMs = rng.pick(choices)
        timing.headerSettleMs = rng.pick(choices)
        timing.foregroundThresholdMs = rng.pick(choices)
        timing.manualRefreshWindowMs = rng.pick(choices)
    }
}

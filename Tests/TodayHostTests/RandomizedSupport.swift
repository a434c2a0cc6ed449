import Foundation
@testable import TodayHost
import TodayTraceProperties

/// SplitMix64, the generator the trace properties draw with too: a failing seed replays exactly.
typealias SplitMix64 = SeededRandom

/// One randomized step: an input, and whether the twin runner is round-tripped through
/// `JSONEncoder`/`JSONDecoder` just before it.
struct RandomStep: CustomStringConvertible {
    var input: Input
    var roundTripTwin = false

    var description: String {
        let input: String
        switch self.input {
        case let .clock(move): input = "clock " + move.json.serialized()
        case .teardown: input = "teardown"
        default: input = self.input.json.serialized()
        }
        return roundTripTwin ? "⟲ " + input : input
    }
}

/// Draws inputs that make sense for the session's current state, plus some that do not.
struct InputGenerator {
    var rng: SplitMix64
    private var counter = 0

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    /// A session setup for the seed: routes, gates, old builds and tight timings that tie.
    mutating func config() -> SessionConfig {
        var config = SessionConfig(uid: "u1")
        config.route = rng.pick([Route.feedsV1, Route.feedsV1, Route.feedsV1, Route.feedsV3, Route.feedsV3, "/embed/feed/v1/b7"])
        if rng.chance(10) { config.capabilities = [] }
        if rng.chance(30) { config.loadingGate = .render }
        if rng.chance(50) {
            config.drawTimings(from: [1, 500, 1000, 3000, 5000, 10000, 12000], &rng)
        }
        return config
    }

    mutating func step(for runner: SessionRunner) -> RandomStep {
        RandomStep(input: input(for: runner), roundTripTwin: rng.chance(7))
    }

    private mutating func fresh(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)-\(counter)"
    }

    /// Every id the session has seen, in a stable order.
    private func known(_ runner: SessionRunner) -> [String] { runner.ledger.records.keys.sorted() }

    /// Mostly none, sometimes a new one, sometimes one already seen (H4: refused).
    private mutating func callerId(_ runner: SessionRunner) -> String? {
        switch rng.below(10) {
        case 0...5: return nil
        case 6...8: return fresh("c")
        default: return rng.pick(known(runner) + [""])
        }
    }

    /// An id for Web to name: pending, the document's, a UI's, any seen, or one never seen.
    private mutating func webId(_ runner: SessionRunner) -> String {
        let session = runner.session
        let choice: String?
        switch rng.below(10) {
        case 0...2: choice = session.refresh.pending.isEmpty ? nil : rng.pick(session.refresh.pending).requestId
        case 3: choice = session.document.requestId
        case 4, 5: choice = session.header.requestId
        case 6: choice = session.pull.owner
        case 7: choice = known(runner).isEmpty ? nil : rng.pick(known(runner))
        default: choice = nil
        }
        return choice ?? fresh("w")
    }

    private mutating func input(for runner: SessionRunner) -> Input {
        switch rng.below(100) {
        case 0..<5: return .gesture(.pull(requestId: callerId(runner)))
        case 5..<10: return .gesture(.liveWidgetCreated(requestId: callerId(runner)))
        case 10..<14: return .lifecycle(.background)
        case 14..<19: return .lifecycle(.foreground(requestId: callerId(runner)))
        case 19..<23: return .lifecycle(.tabActivated(requestId: callerId(runner)))
        case 23..<26: return .lifecycle(.socketEvent(requestId: callerId(runner)))
        case 26..<29: return .lifecycle(.timerTick(requestId: callerId(runner)))
        case 29..<31: return .lifecycle(.navigation(url: rng.pick([nil, nil, "/embed/feeds/v3?language=en&uid=u1", "/elsewhere"])))
        case 31..<33: return .lifecycle(.webContentTerminated(requestId: callerId(runner)))
        case 33..<35: return .lifecycle(.accountSwitch(uid: rng.pick(["u1", "u2", "u3", ""])))
        case 35..<47:
            let requestId = webId(runner)
            return rng.chance(90) ? Web.started(requestId) : Web.malformedStarted(requestId)
        case 47..<71:
            let status = rng.pick(["succeeded", "succeeded", "failed", "cancelled", "unsupported", "weird"])
            let requestId = runner.session.header.owner.flatMap { rng.chance(35) ? $0 : nil } ?? webId(runner)
            return Web.result(requestId, status, mode: rng.pick(["soft", "hard"]))
        case 71..<76:
            let requestId = rng.chance(50) ? webId(runner) : nil
            switch rng.below(3) {
            case 0: return Web.firstBatch(requestId: requestId)
            case 1: return Web.allBatches(empty: rng.chance(50), requestId: requestId)
            default: return Web.loadFailed(requestId: requestId)
            }
        case 76..<79: return Web.loadingPresentation(owner: rng.pick(["web", "web", "native"]))
        case 79..<92:
            // Mostly short moves, so that UIs live long enough to be answered; sometimes long ones.
            if rng.chance(3) { return .clock(.advanceBy(-1)) }
            return .clock(.advanceBy(Millis(rng.below(rng.chance(70) ? 2_001 : 15_001))))
        case 92..<97: return .clock(.toNextTimer)
        case 97: return .clock(.runUntilIdle)
        default: return .clock(.advanceTo(max(0, runner.session.nowMs - Millis(rng.below(2)))))
        }
    }
}

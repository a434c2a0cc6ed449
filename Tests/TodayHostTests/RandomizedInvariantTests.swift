import Foundation
import Testing
@testable import TodayHost

/// Random input sequences, seeded so any failure replays: after every step the host's
/// invariants hold (C2, C3, H9, H11, H13, H20, API timeline `seq`) and a session that was
/// stored and restored mid-run behaves exactly like one that was not.
///
/// (a) the spinner is never up past its watchdog · (b) the header is never `updated` without a
/// matching `succeeded` result · (c) at most one automatic reload per re-arm · (d) `seq` has no
/// gaps · (e) every pending timer is due after `nowMs` · (f) encoding and decoding changes
/// nothing that follows · refused inputs change nothing · a closed session holds nothing.
@Suite struct RandomizedInvariantTests {
    /// `TODAYHOST_SEEDS=42,7 swift test --filter RandomizedInvariantTests` replays chosen seeds.
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["TODAYHOST_SEEDS"]
        .map { $0.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) } }
        ?? [1, 2, 3, 7, 42, 1_337, 0x5EED, 0xC0FFEE, 0xDEAD_BEEF, 20_250_101]
    static let stepsPerSeed = 1_100

    @Test func invariantsHoldAfterEveryRandomStep() throws {
        if ProcessInfo.processInfo.environment["TODAYHOST_SEEDS"] == nil {
            #expect(Self.seeds.count * Self.stepsPerSeed >= 10_000)
        }
        for (index, seed) in Self.seeds.enumerated() {
            // Every third run ends with a teardown, then inputs that must be refused.
            try Self.run(seed: seed, endingWithTeardown: index % 3 == 2)
        }
    }

    /// Runs one seed; records an issue (seed, step, minimized inputs) at the first broken
    /// invariant.
    static func run(seed: UInt64, endingWithTeardown: Bool) throws {
        var generator = InputGenerator(seed: seed)
        let config = generator.config()
        var harness = try InvariantHarness(config: config)
        var steps: [RandomStep] = []
        for index in 0..<stepsPerSeed {
            let step = generator.step(for: harness.runner)
            steps.append(step)
            if let failure = harness.take(step) {
                report(seed: seed, config: config, index: index, steps: steps, failure: failure)
                return
            }
        }
        guard endingWithTeardown else { return }
        steps.append(RandomStep(input: .teardown))
        for _ in 0..<3 { steps.append(generator.step(for: harness.runner)) }
        for index in stepsPerSeed..<steps.count {
            if let failure = harness.take(steps[index]) {
                report(seed: seed, config: config, index: index, steps: steps, failure: failure)
                break
            }
        }
        #expect(harness.runner.session.isClosed, "seed \(seed): teardown closes the session")
    }

    static func report(seed: UInt64, config: SessionConfig, index: Int, steps: [RandomStep], failure: InvariantFailure) {
        let minimal = minimize(config: config, steps: Array(steps[...index]), invariant: failure.invariant)
        let listing = minimal.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n")
        Issue.record("""
            seed \(seed) (0x\(String(seed, radix: 16))), step \(index): invariant \(failure)
            config: \(config.json.serialized())
            minimized to \(minimal.count) of \(index + 1) inputs (⟲ = twin round-tripped first):
            \(listing)
            """)
    }

    /// Replays `steps` on a fresh session; the first broken invariant and its step.
    static func firstFailure(config: SessionConfig, steps: [RandomStep]) -> (index: Int, failure: InvariantFailure)? {
        guard var harness = try? InvariantHarness(config: config) else { return nil }
        for (index, step) in steps.enumerated() {
            if let failure = harness.take(step) { return (index, failure) }
        }
        return nil
    }

    /// Drops chunks of inputs (halving the chunk size) while the same invariant still breaks.
    /// Bounded, so a failing run stays quick.
    static func minimize(config: SessionConfig, steps: [RandomStep], invariant: String) -> [RandomStep] {
        var current = steps
        var chunk = max(1, current.count / 2)
        var replays = 0
        while replays < 400 {
            var start = 0
            var removed = false
            while start < current.count, replays < 400 {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                replays += 1
                if let found = firstFailure(config: config, steps: candidate), found.failure.invariant == invariant {
                    current = Array(candidate[...found.index])
                    removed = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 {
                if !removed { break }
            } else {
                chunk = max(1, chunk / 2)
            }
        }
        return current
    }
}

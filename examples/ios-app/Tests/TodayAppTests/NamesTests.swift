import Foundation
import Testing
import TodayApp
import TodayHost
import TodayHostTesting
import TodayTraceRecorder

/// Issue 44, item 2: the app's own PullSpinner, JSON, Input, Rule and Session, used unqualified
/// beside todaysim's three products. Were any of them public in TodayHost, this file would not
/// build ("ambiguous use of 'init()'", "'JSON' is ambiguous for type lookup").
@Suite struct NamesTests {
    @Test func theAppsOwnTypesAreTheOnlyOnesOfTheirNames() {
        // Each name in a type's place and in a call's: either would be ambiguous.
        var spinner: PullSpinner = PullSpinner()
        spinner.isRefreshing = true
        let value: JSON = JSON.string("x")
        let input: Input = Input(text: "hello")
        let rule: Rule = Rule.enabled
        let session: Session = Session(uid: "u1")
        #expect(spinner.isRefreshing && value == .string("x") && input.text == "hello" && rule == .enabled && session.uid == "u1")
    }

    /// What an app's test sees of the verdict: rule ids as text, `judged` by kind.
    @MainActor @Test func theVerdictReadsByKindAndRuleId() async throws {
        let trace = try await runTodayPageScenario()
        defer { try? FileManager.default.removeItem(at: trace) }
        let verdict = try HostTrace.verify(contentsOf: trace)
        #expect(verdict.conforms, "\(HostTrace.failureMessage(verdict) ?? "")")
        #expect(verdict.judged == [.emit: 1, .navigation: 1, .pull: 2, .overlay: 1])
        #expect(verdict.endMs == 3_000 && verdict.warnings.isEmpty, "the recorder's end line says when recording stopped")
    }

    /// A host that forgets to end its spinner: the failure names H11, the rule broken.
    @MainActor @Test func aSpinnerThatNeverEndsFailsWithItsRule() async throws {
        let trace = try await runTodayPageScenario()
        defer { try? FileManager.default.removeItem(at: trace) }
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        let broken = lines.filter { !$0.contains(#""kind":"pull","requestId""#) || !$0.contains(#""type":"idle""#) }
        #expect(broken.count == lines.count - 1)
        let verdict = try HostTrace.verify(text: broken.joined(separator: "\n"))
        #expect(verdict.divergences.map { "\($0.rule) \($0.problem.rawValue) \($0.kind.rawValue) \($0.type)" } == ["H11 missing pull idle"])
    }
}

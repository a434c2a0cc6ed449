import Foundation
@testable import TodayHost

/// An invariant that did not hold: its letter in the randomized test's list and what was seen.
struct InvariantFailure: CustomStringConvertible {
    var invariant: String
    var detail: String

    init(_ invariant: String, _ detail: String) {
        self.invariant = invariant
        self.detail = detail
    }

    var description: String { "(\(invariant)) \(detail)" }
}

/// Feeds one input at a time to a runner and to its twin (which is stored and restored at
/// random points), and checks the invariants after every step.
struct InvariantHarness {
    private(set) var runner: SessionRunner
    private(set) var twin: SessionRunner
    /// Automatic reloads (cause `recovery` or `termination`) since the budget was last re-armed.
    private(set) var reloadsSinceRearm = 0

    init(config: SessionConfig) throws {
        runner = try SessionRunner(config: config)
        twin = runner
    }

    /// The twin as the service would have it after storing and loading it: through `Codable`
    /// and through the store's binary state form.
    static func roundTripped(_ runner: SessionRunner) throws -> SessionRunner {
        let decoded = try JSONDecoder().decode(HostSession.self, from: JSONEncoder().encode(runner.session))
        let session = try HostSession(stateBytes: decoded.stateBytes)
        var ledger = try JSONDecoder().decode(InMemoryLedger.self, from: JSONEncoder().encode(runner.ledger))
        ledger.apply(try ledger.records.values.map { try RequestRecord(stateBytes: $0.stateBytes) })
        return SessionRunner(restoring: session, ledger: ledger, timeline: runner.timeline)
    }

    /// Applies `step` to both runners; `nil` when every invariant still holds.
    mutating func take(_ step: RandomStep) -> InvariantFailure? {
        if step.roundTripTwin {
            do {
                twin = try Self.roundTripped(twin)
            } catch {
                return InvariantFailure("f", "encoding or decoding threw \(error)")
            }
            guard twin.session == runner.session, twin.ledger == runner.ledger else {
                return InvariantFailure("f", "a round trip changed the state")
            }
        }

        let before = runner
        let applied: Applied
        do throws(InputError) {
            applied = try runner.apply(step.input)
        } catch {
            return refused(error, before: before, step)
        }
        if before.session.isClosed {
            return InvariantFailure("refused", "a closed session applied \(step) (H20: 409 session_closed)")
        }
        let twinApplied: Applied
        do throws(InputError) {
            twinApplied = try twin.apply(step.input)
        } catch {
            return InvariantFailure("f", "the twin threw \(error) where the runner applied \(applied.outcome)")
        }
        guard twinApplied == applied else {
            return InvariantFailure("f", "the twin answered \(twinApplied.outcome) \(twinApplied.entries.map { $0.json.serialized() }) "
                + "where the runner answered \(applied.outcome) \(applied.entries.map { $0.json.serialized() })")
        }
        guard twin.session == runner.session, twin.ledger == runner.ledger else {
            return InvariantFailure("f", "the twin's state differs after the same input")
        }
        return checkSequence(applied, before: before)
            ?? checkTimers()
            ?? checkHeader(applied, before: before, step)
            ?? checkBudget(applied)
            ?? checkClosed()
    }

    /// An input that throws changes nothing, in either runner, and throws the same error.
    private mutating func refused(_ error: InputError, before: SessionRunner, _ step: RandomStep) -> InvariantFailure? {
        do throws(InputError) {
            let twinApplied = try twin.apply(step.input)
            return InvariantFailure("f", "the runner threw \(error) where the twin applied \(twinApplied.outcome)")
        } catch let twinError {
            guard twinError == error else {
                return InvariantFailure("f", "the runner threw \(error), the twin \(twinError)")
            }
        }
        guard runner.session == before.session, runner.ledger == before.ledger,
              runner.timeline.count == before.timeline.count, runner.timeline.last == before.timeline.last
        else {
            return InvariantFailure("refused", "\(error) left the state changed")
        }
        if before.session.isClosed, error != .sessionClosed {
            return InvariantFailure("refused", "a closed session threw \(error), not sessionClosed")
        }
        return nil
    }

    /// (d) `seq` continues with no gap; `version` moves by one; times never go back.
    private func checkSequence(_ applied: Applied, before: SessionRunner) -> InvariantFailure? {
        let start = before.session.lastSeq + 1
        let seqs = applied.entries.map(\.seq)
        guard !seqs.isEmpty, seqs == Array(start..<(start + seqs.count)),
              runner.session.lastSeq == seqs.last, runner.timeline.last?.seq == seqs.last
        else {
            return InvariantFailure("d", "seq \(seqs) after \(before.session.lastSeq), lastSeq \(runner.session.lastSeq)")
        }
        guard runner.session.version == before.session.version + 1 else {
            return InvariantFailure("d", "version \(before.session.version) → \(runner.session.version)")
        }
        let times = [before.session.nowMs] + applied.entries.map(\.atMs)
        guard zip(times, times.dropFirst()).allSatisfy({ $0 <= $1 }), times.last! <= runner.session.nowMs else {
            return InvariantFailure("d", "entry times \(times) go back or pass nowMs \(runner.session.nowMs)")
        }
        return nil
    }

    /// (e) every pending timer is in the future; (a) the spinner is up exactly while its
    /// watchdog is pending, and never past it.
    private func checkTimers() -> InvariantFailure? {
        let session = runner.session
        let now = session.nowMs
        if let overdue = session.watchdogs.first(where: { $0.dueAtMs <= now }) {
            return InvariantFailure("e", "\(overdue.kind.rawValue)(\(overdue.requestId ?? "-")) due \(overdue.dueAtMs) at nowMs \(now)")
        }
        let pullWatchdogs = session.watchdogs.filter { $0.kind == .pullWatchdog }
        switch session.pull.state {
        case let .refreshing(requestId, _):
            guard pullWatchdogs.count == 1, pullWatchdogs[0].requestId == requestId, pullWatchdogs[0].dueAtMs > now else {
                return InvariantFailure("a", "spinner up for \(requestId) at \(now) with watchdogs \(pullWatchdogs.map(\.json))")
            }
        case .idle:
            guard pullWatchdogs.isEmpty else {
                return InvariantFailure("a", "idle spinner with watchdogs \(pullWatchdogs.map(\.json))")
            }
        }
        return nil
    }

    /// (b) the header becomes `updated` for X only on a `succeeded` result for X.
    private func checkHeader(_ applied: Applied, before: SessionRunner, _ step: RandomStep) -> InvariantFailure? {
        var updatedIds = applied.entries.filter { $0.kind == .header && $0.type == "updated" }.map { $0.requestId }
        if runner.session.header.phase == .updated, runner.session.header.state != before.session.header.state {
            updatedIds.append(runner.session.header.requestId)
        }
        for requestId in updatedIds {
            guard case let .webEvent(message) = step.input, message["type"] == "todayPage.refreshResult",
                  message["status"] == "succeeded", let requestId, message["requestId"]?.stringValue == requestId,
                  applied.outcome == .applied
            else {
                return InvariantFailure("b", "header updated for \(requestId ?? "nil") by \(step)")
            }
        }
        return nil
    }

    /// (c) at most one automatic reload until a pull gesture or a `succeeded` native request
    /// re-arms the budget; the budget is armed exactly when none happened since.
    private mutating func checkBudget(_ applied: Applied) -> InvariantFailure? {
        for entry in applied.entries {
            switch entry.kind {
            case .input where entry.type == "pull", .request where entry.type == "succeeded":
                reloadsSinceRearm = 0
            case .navigation where entry.type == "recovery" || entry.type == "termination":
                reloadsSinceRearm += 1
                if reloadsSinceRearm > 1 {
                    return InvariantFailure("c", "automatic reload #\(reloadsSinceRearm) since the budget was re-armed (seq \(entry.seq))")
                }
            default:
                break
            }
        }
        guard runner.session.recovery.armed == (reloadsSinceRearm == 0) else {
            return InvariantFailure("c", "recoveryArmed \(runner.session.recovery.armed) after \(reloadsSinceRearm) reloads since re-arm")
        }
        return nil
    }

    /// H20: a closed session has no timers, no spinner, no header and nothing pending.
    private func checkClosed() -> InvariantFailure? {
        let session = runner.session
        guard session.isClosed else { return nil }
        guard session.watchdogs.isEmpty, session.pull.phase == .idle, session.header.phase == .hidden,
              session.refresh.pending.isEmpty
        else {
            return InvariantFailure("closed", "teardown left \(session.watchdogs.map(\.json)), pull \(session.pull.phase), header \(session.header.phase)")
        }
        return nil
    }
}

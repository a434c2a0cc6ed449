/// The session clock (C1–C3): timers fire in due order as the clock moves.
extension HostSession {
    /// `runUntilIdle` fires at most this many timers (C2).
    package static let runUntilIdleCap = 10_000

    mutating func clockMoved(_ move: ClockMove, runUntilIdleCap: Int, _ log: inout StepLog) throws(InputError) -> Outcome {
        guard config.clock == .virtual else { throw .clockNotVirtual }
        switch move {
        case let .advanceBy(delta):
            guard delta >= 0 else { throw .invalidField("advanceMs", "must be a non-negative integer") }
            let (target, overflow) = nowMs.addingReportingOverflow(delta)
            guard !overflow, target <= config.timing.latestMoveMs || delta == 0 else {
                throw .invalidField("advanceMs", "would move the clock from \(nowMs) ms \(pastLatestMove)")
            }
            advance(to: target, lateness: false, &log)
        case let .advanceTo(target):
            guard target >= nowMs else { throw .invalidField("toMs", "must not be before nowMs (\(nowMs))") }
            guard target <= config.timing.latestMoveMs || target == nowMs else {
                throw .invalidField("toMs", "would move the clock to \(target) ms, \(pastLatestMove)")
            }
            advance(to: target, lateness: false, &log)
        case .toNextTimer:
            guard let next = watchdogs.first else { return .ignored(.noTimer) }
            try checkWithinCeiling(next, field: "toNextTimer")
            advance(to: next.dueAtMs, lateness: false, &log)
        case .runUntilIdle:
            return try runUntilIdle(cap: runUntilIdleCap, &log)
        }
        return .applied
    }

    /// C2: fires every timer due at or before `target` in order, each at its due time, then
    /// sets the clock to `target`. With `lateness` (a `wall` session) each fired timer's entry
    /// says how long after its due time it really fired.
    mutating func advance(to target: Millis, lateness: Bool, _ log: inout StepLog) {
        while let next = watchdogs.first, next.dueAtMs <= target {
            fire(next, lateMs: lateness ? target - next.dueAtMs : nil, &log)
        }
        nowMs = max(nowMs, target)
    }

    /// C1: why a move is refused past `Timing.latestMoveMs`.
    private var pastLatestMove: String {
        let longest = config.timing.longestTimer
        return "past \(config.timing.latestMoveMs) ms: the clock's end (\(clockCeilingMs) ms) less this session's longest timer "
            + "(\(longest.name), \(longest.ms) ms), so that every timer an input arms stays within reach"
    }

    /// A timer due past the clock's ceiling cannot fire: the move that would reach it is
    /// refused whole (`apply` works on a copy, so timers fired before it are dropped too).
    private func checkWithinCeiling(_ next: Watchdog, field: String) throws(InputError) {
        guard next.dueAtMs <= clockCeilingMs else {
            throw .invalidField(field, "the next timer (\(next.kind)) is due at \(next.dueAtMs) ms, past the clock's ceiling of \(clockCeilingMs) ms")
        }
    }

    mutating func runUntilIdle(cap: Int, _ log: inout StepLog) throws(InputError) -> Outcome {
        var fired = 0
        while let next = watchdogs.first {
            guard fired < cap else { return .appliedWithNote("loopCap") }
            try checkWithinCeiling(next, field: "runUntilIdle")
            fire(next, lateMs: nil, &log)
            fired += 1
        }
        return .applied
    }

    private mutating func fire(_ watchdog: Watchdog, lateMs: Millis?, _ log: inout StepLog) {
        nowMs = watchdog.dueAtMs
        step += 1
        perform([.watchdog(kind: watchdog.kind, requestId: watchdog.requestId, lateMs: lateMs)], &log)
        switch watchdog.kind {
        case .softRefreshDeadline: softRefreshDeadlineExpired(&log)
        case .pullWatchdog: perform(pull.timerFired(.pullWatchdog), &log)
        case .headerWatchdog, .headerHide: perform(header.timerFired(watchdog.kind), &log)
        }
        // A coordinator that kept a fired timer would make every advance loop forever.
        if let next = watchdogs.first, next == watchdog {
            preconditionFailure("\(watchdog.kind) was still pending after it fired")
        }
    }

    /// C1, `wall` mode: fires the timers that fell due by the real elapsed time `wallNowMs`
    /// (downtime included), each stamped with its due time and how late it fired. Not an
    /// input: `version` stays. Returns `nil` when nothing was due and the clock stayed.
    /// Pure, as `apply` is: `.needs` (the session unchanged) when it read a record it was not
    /// `given`; the records to read first are `lookups(for: .clock(.advanceTo(wallNowMs)))`.
    package mutating func catchUp(toWallClock wallNowMs: Millis, given: LedgerRecords) -> Application? {
        guard wallNowMs > nowMs else { return nil }
        var next = self
        var log = StepLog(ledger: LedgerOverlay(base: given))
        next.advance(to: wallNowMs, lateness: true, &log)
        if let needed = log.ledger.needed { return .needs(needed) }
        self = next
        return .applied(Applied(outcome: .applied, resolution: .null, entries: log.entries, ledgerWrites: log.ledger.changedRecords))
    }

    /// `catchUp` against a whole ledger (which answers every read).
    package mutating func catchUp(toWallClock wallNowMs: Millis, ledger: InMemoryLedger) -> Applied? {
        switch catchUp(toWallClock: wallNowMs, given: ledger.given) {
        case nil: return nil
        case let .applied(applied)?: return applied
        case let .needs(ids)?: preconditionFailure("a whole ledger left \(ids) unread")
        }
    }
}

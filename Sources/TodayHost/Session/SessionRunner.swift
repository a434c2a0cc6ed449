/// Drives one session in memory: applies one input at a time, keeps the whole timeline and the
/// request ledger. The service does the same against SQLite; tests and tools use this.
package struct SessionRunner: Sendable {
    package private(set) var session: HostSession
    package private(set) var ledger = InMemoryLedger()
    package private(set) var timeline: [TimelineEntry]

    package init(id: String = "s1", config: SessionConfig) throws(InputError) {
        let (session, created) = try HostSession.create(id: id, config: config)
        self.session = session
        self.timeline = created.entries
    }

    /// Resumes from a stored session and ledger (as the service does after a restart).
    package init(restoring session: HostSession, ledger: InMemoryLedger, timeline: [TimelineEntry]) {
        self.session = session
        self.ledger = ledger
        self.timeline = timeline
    }

    @discardableResult
    package mutating func apply(_ input: Input, runUntilIdleCap: Int = HostSession.runUntilIdleCap) throws(InputError) -> Applied {
        let applied = try session.apply(input, ledger: ledger, runUntilIdleCap: runUntilIdleCap)
        ledger.apply(applied.ledgerWrites)
        timeline.append(contentsOf: applied.entries)
        return applied
    }

    // MARK: The clock (C2)

    @discardableResult
    package mutating func advance(by delta: Millis) throws(InputError) -> Applied {
        try apply(.clock(.advanceBy(delta)))
    }

    @discardableResult
    package mutating func advance(to target: Millis) throws(InputError) -> Applied {
        try apply(.clock(.advanceTo(target)))
    }

    @discardableResult
    package mutating func toNextTimer() throws(InputError) -> Applied {
        try apply(.clock(.toNextTimer))
    }

    @discardableResult
    package mutating func runUntilIdle(cap: Int = HostSession.runUntilIdleCap) throws(InputError) -> Applied {
        try apply(.clock(.runUntilIdle), runUntilIdleCap: cap)
    }

    /// `wall` mode (C1): fires what fell due by the real elapsed time.
    @discardableResult
    package mutating func catchUp(toWallClock wallNowMs: Millis) -> Applied? {
        guard let applied = session.catchUp(toWallClock: wallNowMs, ledger: ledger) else { return nil }
        ledger.apply(applied.ledgerWrites)
        timeline.append(contentsOf: applied.entries)
        return applied
    }
}

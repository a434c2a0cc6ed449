/// Drives one session in memory: applies one input at a time, keeps the whole timeline and the
/// request ledger. The service does the same against SQLite; tests and tools use this.
public struct SessionRunner: Sendable {
    public private(set) var session: HostSession
    public private(set) var ledger = InMemoryLedger()
    public private(set) var timeline: [TimelineEntry]

    public init(id: String = "s1", config: SessionConfig) throws(InputError) {
        let (session, created) = try HostSession.create(id: id, config: config)
        self.session = session
        self.timeline = created.entries
    }

    /// Resumes from a stored session and ledger (as the service does after a restart).
    public init(restoring session: HostSession, ledger: InMemoryLedger, timeline: [TimelineEntry]) {
        self.session = session
        self.ledger = ledger
        self.timeline = timeline
    }

    @discardableResult
    public mutating func apply(_ input: Input, runUntilIdleCap: Int = HostSession.runUntilIdleCap) throws(InputError) -> Applied {
        let applied = try session.apply(input, ledger: ledger, runUntilIdleCap: runUntilIdleCap)
        ledger.apply(applied.ledgerWrites)
        timeline.append(contentsOf: applied.entries)
        return applied
    }

    // MARK: The clock (C2)

    @discardableResult
    public mutating func advance(by delta: Millis) throws(InputError) -> Applied {
        try apply(.clock(.advanceBy(delta)))
    }

    @discardableResult
    public mutating func advance(to target: Millis) throws(InputError) -> Applied {
        try apply(.clock(.advanceTo(target)))
    }

    @discardableResult
    public mutating func toNextTimer() throws(InputError) -> Applied {
        try apply(.clock(.toNextTimer))
    }

    @discardableResult
    public mutating func runUntilIdle(cap: Int = HostSession.runUntilIdleCap) throws(InputError) -> Applied {
        try apply(.clock(.runUntilIdle), runUntilIdleCap: cap)
    }

    /// `wall` mode (C1): fires what fell due by the real elapsed time.
    @discardableResult
    public mutating func catchUp(toWallClock wallNowMs: Millis) -> Applied? {
        guard let applied = session.catchUp(toWallClock: wallNowMs, ledger: ledger) else { return nil }
        ledger.apply(applied.ledgerWrites)
        timeline.append(contentsOf: applied.entries)
        return applied
    }
}

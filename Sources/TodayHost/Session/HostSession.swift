/// One simulated native session: the composition of its coordinators, its clock and its
/// history counters. It is the one place that decides which coordinator sees which event.
/// It stores as one `SessionSnapshot`: a stored and restored session continues exactly.
package struct HostSession: Equatable, Sendable {
    package private(set) var id: String
    package private(set) var config: SessionConfig
    /// The current account; replaced by an account switch (H19).
    package internal(set) var uid: String
    package internal(set) var isClosed = false
    /// 1 at creation, +1 for every input answered `200`.
    package internal(set) var version = 1
    package internal(set) var nowMs: Millis = 0
    /// The `seq` of the last timeline entry (`counts.timeline`).
    package internal(set) var lastSeq = 0
    /// Inputs and timer firings so far; orders timer ties (C2).
    package internal(set) var step = 0
    /// Feeds server-made request ids (H4).
    package internal(set) var requestCounter = 0
    package internal(set) var violationCount = 0
    /// What the document was given at document start (H2); fixed for the session.
    package let injectedCapabilities: [String]

    package internal(set) var app = ForegroundTracker()
    package internal(set) var document = DocumentLoader()
    package internal(set) var header = HeaderRenderer()
    package internal(set) var pull = PullSpinner()
    package internal(set) var manualWindow = ManualRefreshWindow()
    package internal(set) var refresh = SoftRefresh()
    package internal(set) var recovery = RecoveryBudget()
    package internal(set) var chat = ChatAttribution()
    package internal(set) var liveWidgetSheet = LiveWidgetSheet()
    package internal(set) var dialog = NativeDialog()
    /// Feeds server-made dialog call ids (H27).
    package var dialogCounter: Int { dialog.counter }

    /// What an invalid id is told (`isValidId`).
    package static let idRule = "must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}"

    /// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` (API conventions).
    package static func isValidId(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        return isAlphanumeric(bytes[0])
            && bytes.dropFirst().allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private init(id: String, config: SessionConfig) {
        self.id = id
        self.config = config
        self.uid = config.uid
        self.injectedCapabilities = config.effectiveCapabilities
    }

    /// A stored session (`HostSession+Snapshot.swift`): it goes on as it was.
    package init(_ snapshot: SessionSnapshot) {
        (id, config, uid, isClosed) = (snapshot.id, snapshot.config, snapshot.uid, snapshot.isClosed)
        (version, nowMs, lastSeq, step) = (snapshot.version, snapshot.nowMs, snapshot.lastSeq, snapshot.step)
        (requestCounter, violationCount) = (snapshot.requestCounter, snapshot.violationCount)
        injectedCapabilities = snapshot.injectedCapabilities
        app = ForegroundTracker(snapshot.app)
        document = DocumentLoader(snapshot.document)
        header = HeaderRenderer(snapshot.header)
        pull = PullSpinner(snapshot.pull)
        manualWindow = ManualRefreshWindow(snapshot.manualWindow)
        refresh = SoftRefresh(snapshot.refresh)
        recovery = RecoveryBudget(snapshot.recovery)
        chat = ChatAttribution(snapshot.chat)
        liveWidgetSheet = LiveWidgetSheet(snapshot.liveWidgetSheet)
        dialog = NativeDialog(snapshot.dialog, counter: snapshot.dialogCounter)
    }

    /// H1–H3: a new session in the foreground, its first document loading behind the overlay.
    package static func create(id: String, config: SessionConfig) throws(InputError) -> (HostSession, Applied) {
        guard isValidId(id) else { throw .invalidField("id", idRule) }
        try config.validate()
        var session = HostSession(id: id, config: config)
        var log = StepLog(ledger: LedgerOverlay(base: InMemoryLedger().given))
        session.step = 1
        session.append(kind: .input, type: "create", requestId: nil,
                       data: ["input": config.json, "outcome": "applied", "via": "create"], &log)
        session.perform(session.document.load(url: session.ownURL(requestId: nil), requestId: nil, cause: .initial), &log)
        session.perform([.hostAnalytics(event: "app_sess_start"), .hostAnalytics(event: "page_view")], &log)
        return (session, Applied(outcome: .applied, resolution: .null, entries: log.entries, ledgerWrites: []))
    }

    /// The same session under another id (`POST …/fork`): server-made ids it makes from now
    /// on derive from `newId`.
    package func forked(as newId: String) throws(InputError) -> HostSession {
        guard Self.isValidId(newId) else { throw .invalidField("id", Self.idRule) }
        // The whole value, so a field added to the session is forked too; only the id differs.
        var copy = self
        copy.id = newId
        return copy
    }

    /// Applies one input: all of it or, when it throws, none of it. `runUntilIdleCap` bounds
    /// how many timers `runUntilIdle` may fire (C2). A pure function of the session, the input
    /// and the request records it is `given`: it reads nothing else. When it read a record it was
    /// not given it applies nothing and answers `.needs` with those ids (whatever it would have
    /// thrown: an answer made from a wrong guess is no answer).
    package mutating func apply(_ input: Input, given: LedgerRecords,
                               runUntilIdleCap: Int = HostSession.runUntilIdleCap) throws(InputError) -> Application {
        guard !isClosed else { throw .sessionClosed }
        var next = self
        var log = StepLog(ledger: LedgerOverlay(base: given))
        next.step += 1
        next.version += 1
        let inputEntry = log.entries.count
        next.append(kind: .input, type: input.typeName, requestId: nil, data: .null, &log)
        let outcome: Outcome, resolution: JSON
        do {
            (outcome, resolution) = try next.perform(input, runUntilIdleCap: runUntilIdleCap, &log)
        } catch {
            if let needed = log.ledger.needed { return .needs(needed) }
            throw error
        }
        if let needed = log.ledger.needed { return .needs(needed) }
        var data: [(String, JSON)] = [("input", input.json), ("outcome", .string(outcome.name))]
        if let reason = outcome.reason { data.append(("reason", .string(reason))) }
        data.append(("via", .string(input.channel)))
        log.entries[inputEntry].data = .object(data)
        log.entries[inputEntry].rule = outcome.rule(forType: input.typeName)
        self = next
        return .applied(Applied(outcome: outcome, resolution: resolution, entries: log.entries,
                                ledgerWrites: log.ledger.changedRecords))
    }

    /// `apply` against a whole ledger (which answers every read).
    package mutating func apply(_ input: Input, ledger: InMemoryLedger,
                               runUntilIdleCap: Int = HostSession.runUntilIdleCap) throws(InputError) -> Applied {
        switch try apply(input, given: ledger.given, runUntilIdleCap: runUntilIdleCap) {
        case let .applied(applied): return applied
        case let .needs(ids): preconditionFailure("a whole ledger left \(ids) unread")
        }
    }

    /// The request ids `input` may read the records of, for the caller to read before it (in
    /// one query): the id the input names, the requests the session has open, and, for an input
    /// that may make a request, the next server-made id (H4). `apply` asks for any other it
    /// reads (`.needs`): a guess that falls short costs a second read, never a wrong answer.
    package func lookups(for input: Input) -> [String] {
        let named: String?
        let mayMint: Bool
        switch input {
        case let .gesture(gesture):
            named = gesture.callerRequestId
            switch gesture {
            case .pull, .liveWidgetCreated: mayMint = true
            case .liveWidgetCancelled, .chatEdit, .chatSend, .dialogChoose, .dialogDismiss: mayMint = false
            }
        case let .lifecycle(lifecycle):
            named = lifecycle.callerRequestId
            if case .background = lifecycle { mayMint = false } else { mayMint = true }
        case let .webEvent(message):
            named = message["requestId"]?.stringValue
            mayMint = true
        case .clock:
            named = nil
            mayMint = true
        case .command, .teardown:
            named = nil
            mayMint = false
        }
        var ids = standingLookups(mayMint: mayMint)
        if let named, !ids.contains(named) { ids.insert(named, at: 0) }
        return ids
    }

    /// The ids any input may read besides its own, the same until the session changes: the
    /// requests it has open and, with `mayMint`, the next server-made id (H4). A store keeps
    /// these records with the session it caches, so the next input's read finds them known.
    package func standingLookups(mayMint: Bool = true) -> [String] {
        var ids: [String] = []
        // A set, not a linear look: nothing bounds the open requests on a virtual clock (every
        // tab activation adds one), and the writer of every session runs this twice an input.
        var seen: Set<String> = []
        func add(_ id: String?) {
            if let id, seen.insert(id).inserted { ids.append(id) }
        }
        for pending in refresh.pending { add(pending.requestId) }
        add(document.requestId)
        add(header.owner)
        add(pull.owner)
        if mayMint { add(RequestIdFactory.requestId(sessionId: id, counter: requestCounter + 1)) }
        return ids
    }

    private mutating func perform(_ input: Input, runUntilIdleCap: Int, _ log: inout StepLog) throws(InputError) -> (Outcome, JSON) {
        switch input {
        case let .gesture(gesture):
            try checkCallerRequestId(gesture.callerRequestId, log)
            return (try gestureReceived(gesture, &log), .null)
        case let .lifecycle(lifecycle):
            try checkCallerRequestId(lifecycle.callerRequestId, log)
            return (try lifecycleChanged(lifecycle, &log), .null)
        case let .webEvent(message):
            return try bridgeMessage(message, &log)
        case let .clock(move):
            return (try clockMoved(move, runUntilIdleCap: runUntilIdleCap, &log), .null)
        case let .command(command):
            try commandSent(command, &log)
            return (.applied, .null)
        case .teardown:
            tearDown(&log)
            return (.applied, .null)
        }
    }

    /// H4: a caller's request id must be non-empty and new to this session.
    private func checkCallerRequestId(_ requestId: String?, _ log: StepLog) throws(InputError) {
        guard let requestId else { return }
        guard !requestId.isEmpty else { throw .invalidField("requestId", "must be a non-empty string") }
        guard !log.ledger.contains(requestId) else {
            throw .invalidField("requestId", "\(requestId) was already used by this session")
        }
    }

    /// H4: the caller's id, or the next server-made one this session has not seen.
    mutating func newRequestId(_ callerRequestId: String?, _ log: StepLog) -> String {
        if let callerRequestId { return callerRequestId }
        while true {
            requestCounter += 1
            let candidate = RequestIdFactory.requestId(sessionId: id, counter: requestCounter)
            if !log.ledger.contains(candidate) { return candidate }
        }
    }

    /// H3: the session's own document URL.
    func ownURL(requestId: String?) -> String {
        Route.documentURL(route: config.route, language: config.language, uid: uid, requestId: requestId)
    }

    func hostAnalytics(_ event: String) -> Effect {
        .analytics(event: event, properties: .object(config.analytics.properties(uid: uid)))
    }

    // MARK: Timeline

    /// Carries out what coordinators answered, in order: an effect with an entry is recorded
    /// (a settled request written to the ledger first), a command performed. Answers `ignored`
    /// when a coordinator ignored the event, else `applied`.
    @discardableResult
    mutating func perform(_ effects: [Effect], _ log: inout StepLog) -> Outcome {
        var outcome = Outcome.applied
        for effect in effects {
            switch effect {
            case let .ignored(reason): outcome = .ignored(reason)
            case let .answer(value): log.answer = value
            case let .hostAnalytics(event): record(hostAnalytics(event), &log)
            case let .requestSoftRefresh(reason, requestId): requestSoftRefresh(reason, callerRequestId: requestId, &log)
            case let .reload(cause, requestId): reload(cause, callerRequestId: requestId, &log)
            case let .feedbackSettled(requestId, status): feedbackSettled(requestId, status, &log)
            case let .feedbackTimedOut(requestIds): feedbackTimedOut(requestIds, &log)
            case let .endPull(outcome): perform(pull.end(outcome), &log)
            case .emit, .navigation, .requestSettled, .header, .pull, .overlay, .watchdog, .analytics, .violation, .resolution:
                record(effect, &log)
            }
        }
        return outcome
    }

    private mutating func record(_ effect: Effect, _ log: inout StepLog) {
        guard let parts = effect.entryParts else { preconditionFailure("a command has no entry: \(effect)") }
        if case let .requestSettled(requestId, outcome, _, rule) = effect { noteSettled(requestId, outcome, rule: rule, &log) }
        if case .violation = effect { violationCount += 1 }
        append(kind: parts.kind, type: parts.type, requestId: parts.requestId, rule: parts.rule, data: parts.data, &log)
    }

    mutating func append(kind: TimelineEntry.Kind, type: String, requestId: String?, rule: Rule? = nil, data: JSON,
                         _ log: inout StepLog) {
        lastSeq += 1
        log.entries.append(TimelineEntry(seq: lastSeq, atMs: nowMs, kind: kind, type: type, requestId: requestId, rule: rule,
                                         data: data))
    }

    /// A kept replay's last entry (`POST /v1/host-traces?keep=`): the verdict on the host trace
    /// it replays, `conforms` or `diverges`, its data the verdict without `session`. Not an
    /// input: the version stays.
    mutating func noteVerdict(_ verdict: Verdict) -> TimelineEntry {
        var log = StepLog(ledger: LedgerOverlay(base: InMemoryLedger().given))
        var data = verdict.json
        if case let .object(members) = data { data = .object(members.filter { $0.0 != "session" }) }
        append(kind: .verdict, type: verdict.conforms ? "conforms" : "diverges", requestId: nil, data: data, &log)
        return log.entries[0]
    }

    var instant: Instant { Instant(ms: nowMs, step: step) }

    /// Every pending timer, in the order they will fire (C2, C3).
    package var watchdogs: [Watchdog] {
        (refresh.timers + pull.timers + header.timers)
            .sorted(by: Watchdog.firesBefore)
    }
}

/// What one input has written so far: its timeline entries and ledger records, and what the
/// bridge call answers.
struct StepLog {
    var ledger: LedgerOverlay
    var entries: [TimelineEntry] = []
    var answer = JSON.null
}

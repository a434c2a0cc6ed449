/// One simulated native session: the composition of its coordinators, its clock and its
/// history counters. It is the one place that decides which coordinator sees which event.
/// The whole value is `Codable`: a stored and restored session continues exactly.
package struct HostSession: Codable, Equatable, Sendable {
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
    package internal(set) var dialogCounter = 0

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

    /// H1–H3: a new session in the foreground, its first document loading behind the overlay.
    package static func create(id: String, config: SessionConfig) throws(InputError) -> (HostSession, Applied) {
        guard isValidId(id) else { throw .invalidField("id", idRule) }
        try config.validate()
        var session = HostSession(id: id, config: config)
        var log = StepLog(ledger: LedgerOverlay(base: InMemoryLedger().given))
        session.step = 1
        session.append(kind: .input, type: "create", requestId: nil,
                       data: ["input": config.json, "outcome": "applied", "via": "create"], &log)
        session.record(session.document.load(url: session.ownURL(requestId: nil), requestId: nil, cause: .initial), &log)
        session.record([session.hostAnalytics("app_sess_start"), session.hostAnalytics("page_view")], &log)
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
    /// one query): the id the input names, the requests the session has open, and the next
    /// server-made ids (H4). `apply` asks for any other it reads (`.needs`).
    package func lookups(for input: Input) -> [String] {
        var ids: [String] = []
        switch input {
        case let .gesture(gesture): ids += [gesture.callerRequestId].compactMap { $0 }
        case let .lifecycle(lifecycle): ids += [lifecycle.callerRequestId].compactMap { $0 }
        case let .webEvent(message): ids += [message["requestId"]?.stringValue].compactMap { $0 }
        case .clock, .command, .teardown: break
        }
        ids += refresh.pending.map(\.requestId)
        ids += [document.requestId, header.owner, pull.owner].compactMap { $0 }
        ids += (1...2).map { RequestIdFactory.requestId(sessionId: id, counter: requestCounter + $0) }
        var seen: Set<String> = []
        return ids.filter { seen.insert($0).inserted }
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

    mutating func record(_ effects: [Effect], _ log: inout StepLog) {
        for effect in effects {
            if case let .requestSettled(requestId, outcome, _, rule) = effect { noteSettled(requestId, outcome, rule: rule, &log) }
            let parts = effect.entryParts
            if case .violation = effect { violationCount += 1 }
            append(kind: parts.kind, type: parts.type, requestId: parts.requestId, rule: parts.rule, data: parts.data, &log)
        }
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

/// What one input has written so far: its timeline entries and ledger records.
struct StepLog {
    var ledger: LedgerOverlay
    var entries: [TimelineEntry] = []
}

extension HostSession: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.string(id)
        writer.value(config)
        writer.string(uid)
        writer.bool(isClosed)
        writer.int(version)
        writer.int(nowMs)
        writer.int(lastSeq)
        writer.int(step)
        writer.int(requestCounter)
        writer.int(violationCount)
        writer.array(injectedCapabilities) { $0.string($1) }
        writer.value(app)
        writer.value(document)
        writer.value(header)
        writer.value(pull)
        writer.value(manualWindow)
        writer.value(refresh)
        writer.value(recovery)
        writer.value(chat)
        writer.value(liveWidgetSheet)
        writer.value(dialog)
        writer.int(dialogCounter)
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        id = try reader.string()
        config = try reader.value()
        uid = try reader.string()
        isClosed = try reader.bool()
        version = try reader.int()
        nowMs = try reader.int64()
        lastSeq = try reader.int()
        step = try reader.int()
        requestCounter = try reader.int()
        violationCount = try reader.int()
        injectedCapabilities = try reader.array { reader throws(StateDecodingError) in try reader.string() }
        app = try reader.value()
        document = try reader.value()
        header = try reader.value()
        pull = try reader.value()
        manualWindow = try reader.value()
        refresh = try reader.value()
        recovery = try reader.value()
        chat = try reader.value()
        liveWidgetSheet = try reader.value()
        dialog = try reader.value()
        dialogCounter = try reader.int()
    }
}

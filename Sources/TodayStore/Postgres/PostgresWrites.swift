import TodayHost

/// The rows a PostgreSQL write transaction adds or changes, kept until just before its COMMIT
/// and then written set-wise: one statement per table for the whole transaction (a batch of
/// inputs), not one per row. Every statement is a round trip on the one write connection, and
/// those round trips, not PostgreSQL's work, were what limited writes (issue 14, item 7). Reads
/// within the transaction (a request record, an idempotency key) see what is kept here first.
/// A savepoint is a copy of what is kept; nothing reaches the database before `flush`.
final class PostgresWrites {
    struct SessionUpdate {
        var session: HostSession
        /// The revision the row holds (locked since the transaction read it).
        var expectedRevision: Int?
        var nowMs: Millis
    }

    struct Pending {
        var updates: [Int64: SessionUpdate] = [:]
        var uids: [Int64: String] = [:]
        var entries: [(ord: Int64, entry: EncodedEntry)] = []
        var records: [RecordKey: [UInt8]] = [:]
        var recordOrder: [RecordKey] = []
        var keys: [RecordKey: (fingerprint: [UInt8], answer: [UInt8], createdMs: Millis)] = [:]
        var keyOrder: [RecordKey] = []
        /// What the transaction tells other servers (`PostgresChannels`), sent with its writes.
        var changed: [String] = []
        var wallTimers: [String] = []
    }

    struct RecordKey: Hashable {
        var ord: Int64
        var name: String
    }

    /// The token this server's notifications carry (`PostgresChannels`).
    let sender: String

    init(sender: String) {
        self.sender = sender
    }

    private(set) var pending = Pending()
    private var saved: Pending?

    func update(ord: Int64, _ session: HostSession, expectedRevision: Int?, nowMs: Millis) {
        // The first update of a row in the transaction knows what the row held.
        let expected = pending.updates[ord]?.expectedRevision ?? expectedRevision
        pending.updates[ord] = SessionUpdate(session: session, expectedRevision: expected, nowMs: nowMs)
    }

    func updateUid(ord: Int64, uid: String) { pending.uids[ord] = uid }

    func insert(ord: Int64, _ entries: [EncodedEntry]) {
        pending.entries += entries.map { (ord: ord, entry: $0) }
    }

    func record(ord: Int64, requestId: String) -> [UInt8]? { pending.records[RecordKey(ord: ord, name: requestId)] }

    func save(ord: Int64, _ records: [RequestRecord]) {
        for record in records {
            let key = RecordKey(ord: ord, name: record.requestId)
            if pending.records[key] == nil { pending.recordOrder.append(key) }
            pending.records[key] = record.stateBytes
        }
    }

    func idempotency(ord: Int64, key: String) -> (fingerprint: [UInt8], answer: [UInt8])? {
        pending.keys[RecordKey(ord: ord, name: key)].map { ($0.fingerprint, $0.answer) }
    }

    func remember(ord: Int64, key: String, fingerprint: [UInt8], answer: [UInt8], createdMs: Millis) {
        let recordKey = RecordKey(ord: ord, name: key)
        if pending.keys[recordKey] == nil { pending.keyOrder.append(recordKey) }
        pending.keys[recordKey] = (fingerprint, answer, createdMs)
    }

    func announce(changed ids: [String], wallTimers: [String]) {
        pending.changed += ids
        pending.wallTimers += wallTimers
    }

    func savepoint() { saved = pending }
    func releaseSavepoint() { saved = nil }
    func rollbackToSavepoint() {
        if let saved { pending = saved }
    }

    /// Writes everything kept, a statement per table; then nothing is kept.
    func flush(_ run: (String, [PostgresValue]) throws(StoreError) -> PostgresResult) throws(StoreError) {
        defer { pending = Pending() }
        if !pending.updates.isEmpty {
            let updates = pending.updates.sorted { $0.key < $1.key }
            let result = try run("update_sessions", [
                PostgresValue.int64Array(updates.map(\.key)),
                PostgresValue.int64Array(updates.map { Int64($0.value.session.isClosed ? 1 : 0) }),
                PostgresValue.int64Array(updates.map { $0.value.session.nextDueMs }),
                PostgresValue.int64Array(updates.map { Int64($0.value.session.version) }),
                PostgresValue.byteaArray(updates.map(\.value.session.stateBytes)),
                PostgresValue.int64Array(updates.map(\.value.nowMs)),
                PostgresValue.int64Array(updates.map { $0.value.expectedRevision.map(Int64.init) }),
                PostgresValue.int64Array(updates.map { Int64($0.value.session.lastSeq) }),
            ])
            // Every row was locked when the transaction read it: one that did not change was
            // moved on by no one; it is gone or hidden, and the inputs must not stand.
            guard result.affectedRows == updates.count else {
                throw .storageUnavailable("\(updates.count - result.affectedRows) session row(s) changed under their lock")
            }
        }
        for (ord, uid) in pending.uids { _ = try run("update_uid", [.text(uid), .int64(ord)]) }
        if !pending.entries.isEmpty {
            _ = try run("insert_timeline", [
                PostgresValue.int64Array(pending.entries.map(\.ord)), PostgresValue.int64Array(pending.entries.map { Int64($0.entry.seq) }),
                PostgresValue.textArray(pending.entries.map(\.entry.kind)),
                PostgresValue.byteaArray(pending.entries.map(\.entry.json)),
            ])
            let violations = pending.entries.filter { $0.entry.violation != nil }
            if !violations.isEmpty {
                _ = try run("order_lock", [.int64(PostgresTransaction.violationOrderLock)])
                _ = try run("insert_violations", [
                    PostgresValue.int64Array(violations.map(\.ord)), PostgresValue.int64Array(violations.map { Int64($0.entry.seq) }),
                    PostgresValue.textArray(violations.map { $0.entry.violation ?? "" }),
                ])
            }
        }
        if !pending.recordOrder.isEmpty {
            let keys = pending.recordOrder
            _ = try run("upsert_records", [
                PostgresValue.int64Array(keys.map(\.ord)), PostgresValue.textArray(keys.map(\.name)),
                PostgresValue.byteaArray(keys.map { pending.records[$0] ?? [] }),
            ])
        }
        for key in pending.keyOrder {
            guard let kept = pending.keys[key] else { continue }
            _ = try run("insert_idempotency", [.int64(key.ord), .text(key.name), .bytes(kept.fingerprint), .bytes(kept.answer),
                                               .int64(kept.createdMs)])
        }
        // Last, in the same round trips' transaction: delivered by PostgreSQL when it commits.
        let notifications = PostgresChannels.payloads(pending.changed, from: sender).map { (PostgresChannels.changes, $0) }
            + PostgresChannels.payloads(Set(pending.wallTimers).sorted(), from: sender).map { (PostgresChannels.wallTimers, $0) }
        if !notifications.isEmpty {
            _ = try run("notify", [PostgresValue.textArray(notifications.map(\.0)), PostgresValue.textArray(notifications.map(\.1))])
        }
    }
}

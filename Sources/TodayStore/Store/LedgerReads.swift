import Foundation
import TodayHost

/// The request records an input reads, read for it inside the write's transaction: the ones
/// `HostSession.lookups(for:)` names, in one query before the input, and any the pure apply then
/// says it needs (`Application.needs`), until it is applied. Nothing of the engine runs a query.
extension SessionStore {
    /// Applies `input` to `session` fed from `transaction`'s records of session `ord` laid under
    /// `given` (what the transaction already read or wrote for it). Once applied, `given` holds
    /// what is known of the records the next input looks up first (`StoredSession.knownLedger`):
    /// the session's open requests and what this input looked up, with its writes laid over.
    /// A refusal is returned, with `session` unchanged.
    func apply(_ input: Input, to session: inout HostSession, given: inout LedgerRecords, ord: Int64,
               _ transaction: any StorageTransaction) throws(StoreError) -> Result<Applied, InputError> {
        let lookups = session.lookups(for: input)
        try read(lookups, into: &given, ord: ord, transaction)
        while true {
            let application: Application
            do throws(InputError) {
                application = try session.apply(input, given: given)
            } catch {
                return .failure(error)
            }
            switch application {
            case let .applied(applied):
                given.overlay(applied.ledgerWrites)
                // The next server-made id is among `lookups` unless this input made a request,
                // which moved it past: then it is new, and the next input reads it.
                given = given.keeping(session.standingLookups(mayMint: false) + lookups)
                return .success(applied)
            case let .needs(ids): try readNeeded(ids, into: &given, ord: ord, transaction)
            }
        }
    }

    /// A `wall` session's catch-up to `wallNowMs`, fed as `apply` is; `nil` when nothing was due.
    func catchUp(_ session: inout HostSession, toWallClock wallNowMs: Millis, given: inout LedgerRecords, ord: Int64,
                 _ transaction: any StorageTransaction) throws(StoreError) -> Applied? {
        try read(session.lookups(for: .clock(.advanceTo(wallNowMs))), into: &given, ord: ord, transaction)
        while let application = session.catchUp(toWallClock: wallNowMs, given: given) {
            switch application {
            case let .applied(applied): return applied
            case let .needs(ids): try readNeeded(ids, into: &given, ord: ord, transaction)
            }
        }
        return nil
    }

    /// What the engine asked for: each id is new to `given` (an engine that asked again for an
    /// id it was given would loop).
    private func readNeeded(_ ids: [String], into given: inout LedgerRecords, ord: Int64,
                            _ transaction: any StorageTransaction) throws(StoreError) {
        guard ids.contains(where: { !given.knows($0) }) else {
            throw .corrupt("the session asked again for request records it was given: \(ids.joined(separator: ", "))")
        }
        try read(ids, into: &given, ord: ord, transaction)
    }

    /// Reads into `given` the records of the `ids` it does not know yet, in one query.
    private func read(_ ids: [String], into given: inout LedgerRecords, ord: Int64,
                      _ transaction: any StorageTransaction) throws(StoreError) {
        let unknown = ids.filter { !given.knows($0) }
        guard !unknown.isEmpty else { return }
        given.add(try Self.records(of: unknown, ord: ord, transaction), lookedUp: unknown)
    }

    /// The stored records of `ids` (those that have one), decoded, in one query.
    static func records(of ids: [String], ord: Int64, _ transaction: any StorageTransaction) throws(StoreError) -> [String: RequestRecord] {
        var found: [String: RequestRecord] = [:]
        for (id, blob) in try transaction.records(ord: ord, requestIds: ids) {
            found[id] = try decodeRecord(blob, id: id)
        }
        return found
    }

    /// A stored record: the state encoding, or JSON as versions before it wrote.
    static func decodeRecord(_ blob: [UInt8], id: String) throws(StoreError) -> RequestRecord {
        do {
            if blob.first == UInt8(ascii: "{") { return try JSONDecoder().decode(RequestRecord.self, from: Data(blob)) }
            return try RequestRecord(stateBytes: blob)
        } catch {
            throw .corrupt("request \(id): \(error)")
        }
    }
}

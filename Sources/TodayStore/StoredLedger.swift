import Foundation
import TodayHost

/// The request ledger of one session, read from storage inside the current transaction. A
/// failed read is kept and rethrown by the store after the input.
final class StoredLedger: RequestLedger {
    private let transaction: any StorageTransaction
    private let session: Int64
    private(set) var failure: StoreError?

    init(_ transaction: any StorageTransaction, session: Int64) {
        self.transaction = transaction
        self.session = session
    }

    func record(for requestId: String) -> RequestRecord? {
        do throws(StoreError) {
            guard let blob = try transaction.record(ord: session, requestId: requestId) else { return nil }
            do {
                if blob.first == UInt8(ascii: "{") { return try JSONDecoder().decode(RequestRecord.self, from: Data(blob)) }
                return try RequestRecord(stateBytes: blob)
            } catch {
                failure = .corrupt("request \(requestId): \(error)")
            }
        } catch {
            failure = error
        }
        return nil
    }
}

/// A ledger with records not yet written laid over it (what a `wall` catch-up changed just
/// before the input in the same transaction).
struct LayeredLedger: RequestLedger {
    let base: StoredLedger
    private var overrides: [String: RequestRecord] = [:]

    init(base: StoredLedger) { self.base = base }

    mutating func overlay(_ records: [RequestRecord]) {
        for record in records { overrides[record.requestId] = record }
    }

    func record(for requestId: String) -> RequestRecord? {
        overrides[requestId] ?? base.record(for: requestId)
    }
}

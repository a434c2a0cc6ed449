import Foundation
import TodayHost

/// The request ledger of one session, read from the `requests` table inside the current
/// transaction. A failed read is kept and rethrown by the store after the input.
final class SQLiteLedger: RequestLedger {
    private let select: Statement
    private let session: Int64
    private(set) var failure: StoreError?

    init(select: Statement, session: Int64) {
        self.select = select
        self.session = session
    }

    func record(for requestId: String) -> RequestRecord? {
        do {
            let blobs = try select.rows([.integer(session), .text(requestId)]) { $0.blob(0) }
            guard let blob = blobs.first else { return nil }
            if blob.first == UInt8(ascii: "{") { return try JSONDecoder().decode(RequestRecord.self, from: Data(blob)) }
            return try RequestRecord(stateBytes: blob)
        } catch let error as SQLiteError {
            failure = .database(error)
        } catch {
            failure = .corrupt("request \(requestId): \(error)")
        }
        return nil
    }
}

/// A ledger with records not yet written laid over it (what a `wall` catch-up changed just
/// before the input in the same transaction).
struct LayeredLedger: RequestLedger {
    let base: SQLiteLedger
    private var overrides: [String: RequestRecord] = [:]

    init(base: SQLiteLedger) { self.base = base }

    mutating func overlay(_ records: [RequestRecord]) {
        for record in records { overrides[record.requestId] = record }
    }

    func record(for requestId: String) -> RequestRecord? {
        overrides[requestId] ?? base.record(for: requestId)
    }
}

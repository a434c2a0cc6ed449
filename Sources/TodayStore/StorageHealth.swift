import CSQLite
import Foundation

/// What the store knows of its disk, for `/readyz` and for the answer a failed write gets
/// (issue 12, items 5 and 6). `/healthz` says the process serves; this says whether its
/// storage takes writes. Each change of state is reported once.
package final class StorageHealth: @unchecked Sendable {
    package enum State: String, Sendable {
        case ok
        /// The disk or the process's file size limit is full; writes resume on their own once
        /// there is room.
        case full
        /// The database file was deleted or replaced under the server: writes are refused
        /// until a restart opens the file at the path again.
        case moved
        /// The file fails otherwise (I/O error, read-only, damage).
        case failing
        /// The database server (PostgreSQL) cannot be reached; writes resume once a connection
        /// works again.
        case unreachable
    }

    private let room: DiskRoom?
    private let lock = NSLock()
    // Guarded by `lock`.
    private var state: State = .ok
    private var detail = ""
    private var lastProbe = Date.distantPast
    private var observers: [@Sendable (State, String) -> Void] = []
    /// What the probes' interval is measured on (the storage's clock).
    private let time: any TimeSource

    /// `path`: the database file, whose folder and size tell a full disk from other I/O
    /// errors; `nil` in memory. `time`: the clock a probe waits its second on.
    init(path: String?, time: any TimeSource = SystemTime()) {
        room = path.map(DiskRoom.init(path:))
        self.time = time
    }

    /// The current state and what caused it.
    package var snapshot: (state: State, detail: String) {
        lock.lock()
        defer { lock.unlock() }
        return (state, detail)
    }

    /// Calls `observer` on each change of state, with its cause (for the log).
    package func observe(_ observer: @escaping @Sendable (State, String) -> Void) {
        lock.lock()
        observers.append(observer)
        lock.unlock()
    }

    /// Refuses a write up front once the file has moved (it would land nowhere).
    func checkWritable() throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        if state == .moved { throw .storageUnavailable(detail) }
    }

    /// A write committed. Returns whether storage was degraded until now.
    @discardableResult
    func committed() -> Bool {
        change(to: .ok, "writes succeed again", unless: .moved)
    }

    /// A probe's small write committed: storage is ready again only if there is room beyond
    /// it (on a full disk a one-page write may still fit where a session does not).
    func probed() {
        guard room?.isExhausted != true else { return }
        committed()
    }

    /// The database server cannot be reached (a connection failed or was lost).
    func unreachable(_ cause: String) {
        change(to: .unreachable, cause, unless: .moved)
    }

    /// The database file is gone from its path.
    func moved(_ path: String) {
        change(to: .moved, "the database file \(path) was deleted or replaced while the server ran; restart it to open the file at its path")
    }

    /// Turns a failed write's error into the one its caller answers with, noting what it says
    /// of the storage.
    func failed(_ error: StoreError) -> StoreError {
        guard case let .database(sqlite) = error else { return error }
        let cause = "\(sqlite.message) (SQLite code \(sqlite.code), errno \(sqlite.systemErrno))"
        if sqlite.isFull || (sqlite.code & 0xFF == SQLITE_IOERR && room?.isExhausted == true) {
            change(to: .full, cause, unless: .moved)
            return .storageFull(cause)
        }
        if sqlite.isStorageFailure {
            change(to: .failing, cause, unless: .moved)
            return .storageUnavailable(cause)
        }
        return error
    }

    /// Whether a degraded (full or failing) store is due for a probe write: a second after it
    /// failed, then at most once a second.
    func shouldProbe() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard state == .full || state == .failing || state == .unreachable, time.hasReached(lastProbe.addingTimeInterval(1)) else {
            return false
        }
        lastProbe = time.now
        return true
    }

    @discardableResult
    private func change(to next: State, _ cause: String, unless sticky: State? = nil) -> Bool {
        lock.lock()
        let previous = state
        guard previous != next, previous != sticky else {
            lock.unlock()
            return false
        }
        state = next
        detail = next == .ok ? "" : cause
        lastProbe = time.now
        let current = observers
        lock.unlock()
        for observer in current { observer(next, cause) }
        return previous != .ok
    }
}

import Foundation

/// Several servers on one shared storage (issue 15, item 4): each write tells the others which
/// sessions it changed, in its own transaction (`StorageTransaction.announce`), and what the
/// others tell this server reaches the same observers its own commits do — so a long poll or
/// an event stream held here wakes for an input applied by another server, and the wall-clock
/// scheduler looks again when another server armed a timer.
extension SessionStore {
    /// Calls `observer` when another server left a `wall` session with a pending timer (its
    /// next due time may have moved), or when such news may have been lost.
    package func observeWallTimerChanges(_ observer: @escaping @Sendable () -> Void) {
        remoteObservers.add(wallTimers: observer)
    }

    /// Calls `observer` when what other servers wrote for a while is unknown (the news was
    /// lost): everything that waits for a session to change should look again.
    package func observeUnknownChanges(_ observer: @escaping @Sendable () -> Void) {
        remoteObservers.add(unknown: observer)
    }

    /// Starts hearing from the other servers; the store's own init calls it, last.
    func followOtherServers() {
        storage.followOtherServers { [weak self] change in
            guard let self else { return }
            switch change {
            case let .sessions(ids):
                notifyChanged(ids)
            case .wallTimer:
                remoteObservers.wallTimersChanged()
            case .unknown:
                remoteObservers.unknown()
                remoteObservers.wallTimersChanged()
            }
        }
    }

    /// Inside a write: tells the other servers what it changed, once it commits.
    func announce(_ changed: [StoredSession], _ transaction: any StorageTransaction) throws(StoreError) {
        guard !changed.isEmpty else { return }
        try transaction.announce(changed: changed.map(\.id),
                                 wallTimers: changed.filter { $0.isWall && $0.session.nextDueMs != nil }.map(\.id))
    }
}

/// Who is told of what other servers did, beyond the observers of changed sessions.
final class RemoteObservers: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var onWallTimers: [@Sendable () -> Void] = []
    private var onUnknown: [@Sendable () -> Void] = []

    func add(wallTimers observer: @escaping @Sendable () -> Void) {
        lock.lock()
        onWallTimers.append(observer)
        lock.unlock()
    }

    func add(unknown observer: @escaping @Sendable () -> Void) {
        lock.lock()
        onUnknown.append(observer)
        lock.unlock()
    }

    func wallTimersChanged() {
        lock.lock()
        let current = onWallTimers
        lock.unlock()
        for observer in current { observer() }
    }

    func unknown() {
        lock.lock()
        let current = onUnknown
        lock.unlock()
        for observer in current { observer() }
    }
}

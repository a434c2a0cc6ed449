import Foundation

/// Read connections, made when first needed and kept; one per concurrent reader up to
/// `capacity` (a reader past it waits for one).
final class PostgresPool: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var idle: [PostgresConnection] = []
    private var made = 0
    private var closed = false
    private let capacity: Int
    private let connect: () throws(StoreError) -> PostgresConnection

    init(capacity: Int, connect: @escaping () throws(StoreError) -> PostgresConnection) {
        self.capacity = max(1, capacity)
        self.connect = connect
    }

    func take() throws(StoreError) -> PostgresConnection {
        condition.lock()
        while idle.isEmpty, made >= capacity, !closed { condition.wait() }
        if closed {
            condition.unlock()
            throw .storageUnavailable("the store is closed")
        }
        if let connection = idle.popLast() {
            condition.unlock()
            if !connection.isBroken { return connection }
            return try replace()
        }
        made += 1
        condition.unlock()
        return try replace()
    }

    /// A new connection for a slot already counted in `made`.
    private func replace() throws(StoreError) -> PostgresConnection {
        do {
            let connection = try connect()
            try PostgresTransaction.prepare(connection)
            return connection
        } catch {
            condition.lock()
            made -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    func give(back connection: PostgresConnection) {
        condition.lock()
        if connection.isBroken || closed { made -= 1 } else { idle.append(connection) }
        condition.signal()
        condition.unlock()
    }

    /// Drops the idle connections: after a lost connection they are from before the loss (a
    /// restarted database ended them all), and the next reader would fail on one.
    func discardIdle() {
        condition.lock()
        made -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}

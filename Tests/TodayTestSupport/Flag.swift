import Foundation

/// A flag one thread sets and another reads (a test's "it happened").
package final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    package init() {}

    package var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    package func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}

import Foundation

/// A flag one thread sets and another reads (a test's "it happened").
public final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    public init() {}

    public var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    public func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}

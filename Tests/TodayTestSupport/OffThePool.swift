import Foundation

// Swift Testing runs every test as a task on Swift's cooperative pool, which has one thread per
// core: two on this machine. A test helper that blocks its thread (a read on a socket, a wait for
// a child process, a poll loop) takes one of the two from every other test for as long as it
// waits; two such waits at once and no other test task runs at all, so a test whose server gives
// it a window (a drain, a statement deadline, a connection deadline) could find the window closed
// when it resumed. Helpers that block do it here, on a thread of their own, and the task that
// awaits them gives its pool thread back.

/// Runs `body` on a new thread and suspends until it returns, without holding a thread of the
/// cooperative pool.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// `offThePool` for a body that cannot fail.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

import Foundation

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
/// Tests wait for what they expect this way, never for a fixed time: on a loaded machine (the
/// whole suite in parallel, a sanitizer build) anything may take many times longer than alone.
@discardableResult
public func eventually(within seconds: Double = 30, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try await condition() { return true }
        if Date() > deadline { return false }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
}

/// `eventually` without a task: polls `condition` on this thread every `pollMs` until it holds
/// or `seconds` pass. For a test that must act within a window the server gives it (a 5 s drain,
/// a 5 s statement deadline): on a loaded machine (a sanitizer run) a waiting task may resume
/// only after such a window has closed.
@discardableResult
public func eventuallyOnThisThread(within seconds: Double = 30, pollMs: UInt32 = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() > deadline { return false }
        usleep(pollMs * 1000)
    }
}

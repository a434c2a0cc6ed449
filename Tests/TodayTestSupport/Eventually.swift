import Foundation

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
/// Tests wait for what they expect this way, never for a fixed time: on a loaded machine (the
/// whole suite in parallel, a sanitizer build) anything may take many times longer than alone.
/// The default is 300 s: a condition that holds at all holds within milliseconds on an idle
/// machine, and 30 s was outrun beside a busy core (fresh-clone run t6 of issue 20: three
/// long polls of the PostgreSQL pass parked only after 30 s, their reads queued on the
/// server's read pool, which runs at nice +10 behind the hog). Only a failing run waits it out.
@discardableResult
package func eventually(within seconds: Double = 300, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try await condition() { return true }
        if Date() > deadline { return false }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
}

/// `eventually` for code that is not async: polls `condition` on this thread every `pollMs` until
/// it holds or `seconds` pass. It holds its thread while it polls; a test task uses `eventually`
/// (or waits in `offThePool`), which gives its thread of the cooperative pool back.
@discardableResult
package func eventuallyOnThisThread(within seconds: Double = 30, pollMs: UInt32 = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() > deadline { return false }
        usleep(pollMs * 1000)
    }
}

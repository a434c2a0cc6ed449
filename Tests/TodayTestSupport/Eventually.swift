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

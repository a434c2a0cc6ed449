import Foundation
import TodayHost

/// Judging a host trace in an app's own test target (docs/TRACES.md, "In the app's tests"): the
/// trace the app's `TodayPageTraceRecorder` wrote, read from its file and judged against the
/// rules in-process (`HostTrace`, the face of `TodayHost`), with a failure message that lists
/// each divergence by rule, line and time, the rules' output beside the host's.
///
/// Foundation and `TodayHost` only, so it builds for iOS test targets; the assertions for XCTest
/// (`XCTAssertHostTraceConforms`) and for Swift Testing (`expectHostTraceConforms`) are in this
/// module where those frameworks exist.
extension HostTrace {
    /// Reads the trace at `url` and judges it (`toleranceMs` replaces the trace's own, as
    /// `todaysim verify-host --tolerance-ms` does).
    public static func verify(contentsOf url: URL, toleranceMs: Int64? = nil) throws(Unjudgeable) -> Verdict {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw Unjudgeable(description: "cannot read the host trace \(url.path): \(error.localizedDescription)")
        }
        return try verify(data, name: url.lastPathComponent, toleranceMs: toleranceMs)
    }
}

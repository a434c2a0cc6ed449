import Foundation
import TodayHost

#if canImport(XCTest)
import XCTest

/// Fails the XCTest test when the host trace at `url` does not conform to the rules; the failure
/// message lists each divergence (`HostTrace.failureMessage`). A trace that cannot be judged
/// (unreadable, a line the format refuses) is thrown. Returns the verdict, for more checks.
///
///     func testTheTodayPageHostConforms() throws {
///         try XCTAssertHostTraceConforms(at: traceURL)
///     }
@discardableResult
public func XCTAssertHostTraceConforms(at url: URL, toleranceMs: Int64? = nil, _ message: @autoclosure () -> String = "",
                                       file: StaticString = #filePath, line: UInt = #line) throws -> HostTrace.Verdict {
    let verdict = try HostTrace.verify(contentsOf: url, toleranceMs: toleranceMs)
    if let failure = HostTrace.failureMessage(verdict, name: url.lastPathComponent) {
        let prefix = message()
        XCTFail(prefix.isEmpty ? failure : prefix + "\n" + failure, file: file, line: line)
    }
    return verdict
}
#endif

#if canImport(Testing)
import Testing

/// Records an issue in the Swift Testing test when the host trace at `url` does not conform to
/// the rules; its comment lists each divergence (`HostTrace.failureMessage`). A trace that cannot
/// be judged is thrown. Returns the verdict, for more checks.
///
///     @Test func theTodayPageHostConforms() throws {
///         try expectHostTraceConforms(at: traceURL)
///     }
@discardableResult
public func expectHostTraceConforms(at url: URL, toleranceMs: Int64? = nil, _ comment: Comment? = nil,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws -> HostTrace.Verdict {
    let verdict = try HostTrace.verify(contentsOf: url, toleranceMs: toleranceMs)
    if let failure = HostTrace.failureMessage(verdict, name: url.lastPathComponent) {
        Issue.record(Comment(rawValue: (comment.map { $0.rawValue + "\n" } ?? "") + failure), sourceLocation: sourceLocation)
    }
    return verdict
}
#endif

import Foundation
import TodayHost
import TodayStore

/// The JSON bodies the API answers with.
enum Responses {
    /// API: Input responses — the entries and the view spliced in as already encoded.
    static func input(_ write: SessionStore.Write, view: [UInt8]) -> HTTPResponse {
        let outcome = write.applied.outcome
        var bytes: [UInt8] = []
        bytes.reserveCapacity(view.count + write.entries.reduce(256) { $0 + $1.count + 1 })
        bytes += Array(#"{"outcome":"#.utf8)
        JSON.string(outcome.name).write(to: &bytes)
        bytes += Array(#","reason":"#.utf8)
        JSON.string(outcome.reason).write(to: &bytes)
        bytes += Array(#","resolution":"#.utf8)
        write.applied.resolution.write(to: &bytes)
        bytes += Array(#","entries":["#.utf8)
        for (index, entry) in write.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry
        }
        bytes += Array(#"],"session":"#.utf8)
        bytes += view
        bytes.append(UInt8(ascii: "}"))
        return .jsonBytes(bytes)
    }

    /// `{"entries":[…], "next", "more"}`, the stored entry bytes spliced in as they are.
    static func timelineBytes(_ page: SessionStore.TimelinePage) -> [UInt8] {
        var bytes = Array(#"{"entries":["#.utf8)
        for (index, entry) in page.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry
        }
        bytes += Array(#"],"next":\#(page.next),"more":\#(page.more)}"#.utf8)
        return bytes
    }
}

import Foundation
import TodayHost
import TodayStore

/// The JSON bodies the API answers with (a write's: `WriteAnswer`, the store's).
enum Responses {
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

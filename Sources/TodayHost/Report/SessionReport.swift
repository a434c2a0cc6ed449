/// A session's verdict on Web's side of the contract (M1–M9): whether it conforms, every
/// violation, and how each native request ended.
package struct SessionReport: Sendable {
    package var sessionId: String
    /// The session's `violation` timeline entries, in `seq` order.
    package var violations: [JSON]
    /// Native requests (soft and hard reloads), in the order they were made.
    package var requests: [RequestRecord]

    package init(sessionId: String, violations: [JSON], records: [RequestRecord]) {
        self.sessionId = sessionId
        self.violations = violations
        self.requests = records.filter { $0.role == .soft || $0.role == .reload }
            .sorted { ($0.madeAfterSeq ?? 0, $0.requestedAtMs, $0.requestId) < ($1.madeAfterSeq ?? 0, $1.requestedAtMs, $1.requestId) }
    }

    package var conforms: Bool { violations.isEmpty }

    /// The rules the monitor checks, with what each asks of Web.
    package static let rules: [(code: String, title: String)] = [
        ("M1", "exactly one refreshResult per requestId"),
        ("M2", "refreshStarted only when the host advertises today_page_revalidate_feedback.v1"),
        ("M3", "no header feedback for user_pull, tab_activated or silent requests"),
        ("M4", "native soft requests end only succeeded or failed"),
        ("M5", "a hard load succeeds only after its first visible render"),
        ("M6", "loadFailed only before any batch of the load was rendered"),
        ("M7", "every native request is answered before its deadline"),
        ("M8", "known todayPage.* events keep their shape"),
        ("M9", "the native overlay is released before the load renders or fails"),
    ]

    /// `GET …/report`.
    package var json: JSON {
        [
            "sessionId": .string(sessionId),
            "conforms": .bool(conforms),
            "violations": .array(violations),
            "requests": .array(requests.map { record in
                [
                    "requestId": .string(record.requestId),
                    "kind": record.role == .soft ? "soft" : "reload",
                    "reason": .string(record.reason?.rawValue),
                    "cause": .string(record.cause?.rawValue),
                    "requestedAtMs": .int(record.requestedAtMs),
                    "outcome": .string(record.outcome?.rawValue),
                    "answeredInMs": record.answeredAtMs.map { .int($0 - record.requestedAtMs) } ?? .null,
                ]
            }),
        ]
    }

    /// `GET …/report?format=junit`: one test case per native request and per rule, so any CI
    /// system can show the verdict. Every violation is a failure of its rule's case, and also of
    /// the case of the native request it names; `failures` counts failing cases, as JUnit does.
    package var junit: String {
        func code(_ violation: JSON) -> String { violation["data"]?["code"]?.stringValue ?? "" }
        func detail(_ violation: JSON) -> String { violation["data"]?["detail"]?.stringValue ?? "" }
        func failure(_ violation: JSON) -> String {
            let message = "\(code(violation)) at \(violation["atMs"]?.int64Value ?? 0) ms (seq \(violation["seq"]?.int64Value ?? 0))"
            return "      <failure message=\"\(XML.escaped(message))\" type=\"\(XML.escaped(code(violation)))\">\(XML.escaped(detail(violation)))</failure>\n"
        }
        var cases: [(name: String, className: String, failures: [JSON])] = []
        for record in requests {
            let label = record.role == .soft ? (record.reason?.rawValue ?? "silent") : "reload, \(record.cause?.rawValue ?? "")"
            let own = violations.filter { $0["requestId"]?.stringValue == record.requestId }
            cases.append(("request \(record.requestId) (\(label)) ended \(record.outcome?.rawValue ?? "pending")",
                          "todaysim.\(sessionId).requests", own))
        }
        for rule in Self.rules {
            cases.append(("\(rule.code): \(rule.title)", "todaysim.\(sessionId).rules",
                          violations.filter { code($0) == rule.code }))
        }
        let failed = cases.filter { !$0.failures.isEmpty }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"todaysim\" tests=\"\(cases.count)\" failures=\"\(failed)\">\n"
        xml += "  <testsuite name=\"\(XML.escaped("session \(sessionId)"))\" tests=\"\(cases.count)\" failures=\"\(failed)\" errors=\"0\">\n"
        for testCase in cases {
            xml += "    <testcase classname=\"\(XML.escaped(testCase.className))\" name=\"\(XML.escaped(testCase.name))\""
            if testCase.failures.isEmpty {
                xml += "/>\n"
            } else {
                xml += ">\n" + testCase.failures.map(failure).joined() + "    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }
}

enum XML {
    /// Text safe inside an attribute or element; characters XML 1.0 forbids are dropped.
    static func escaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&apos;"
            case "\t", "\n", "\r": output.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) { continue }
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}

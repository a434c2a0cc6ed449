import Foundation
import Testing
@testable import TodayHost

/// The store's binary state form loses nothing and refuses what it did not write.
@Suite struct StateCodingTests {
    /// A session with every coordinator away from its defaults.
    static func busySession() throws -> SessionRunner {
        var runner = SessionRunner.make {
            $0.route = "/embed/feeds/v1/edit"
            $0.capabilities = ["today_page_revalidate_feedback.v1", "native_dialog.v1", "live_widget_creation.v1"]
            $0.label = "suite-7"
            $0.language = "zh-Hant"
            $0.platform = .android
            $0.loadingGate = .render
            $0.timing.headerSettleMs = 750
            $0.analytics = AnalyticsBase(did: "d", sid: nil, client_plat: "android-14", ctx: ["screen": "today", "slots": [1, .double(2.5), true, .null]])
        }
        try runner.apply(.gesture(.pull(requestId: "p1")))
        try runner.apply(.lifecycle(.tabActivated(requestId: "t1")))
        try runner.apply(Web.started("w1"))
        try runner.apply(Web.result("w1"))
        try runner.apply(.webEvent(["type": "webView.navigationAction",
                                    "url": "today://chat/send?text=hi%20there&msg_trigger_ele_id=wgt_1&today_source=p"]))
        try runner.apply(.webEvent(["type": "nativeDialog.present", "title": "Delete?",
                                    "actions": [["actionId": "delete", "title": "Delete", "role": "destructive"],
                                                ["actionId": "cancel", "title": "Cancel"]]]))
        try runner.apply(.webEvent(["type": "liveWidgetCreation.present"]))
        try runner.apply(Web.firstBatch())
        try runner.apply(.lifecycle(.background))
        try runner.advance(by: 300)
        return runner
    }

    @Test func aBusySessionRoundTripsExactly() throws {
        let runner = try Self.busySession()
        let bytes = runner.session.stateBytes
        #expect(bytes.first == StateFormat.version)
        let decoded = try HostSession(stateBytes: bytes)
        #expect(decoded == runner.session)
        #expect(decoded.view == runner.session.view)
        for record in runner.ledger.records.values {
            #expect(try RequestRecord(stateBytes: record.stateBytes) == record)
        }
    }

    @Test func itIsMuchSmallerThanJSON() throws {
        let session = try Self.busySession().session
        let json = try JSONEncoder().encode(session)
        #expect(session.stateBytes.count * 2 < json.count, "\(session.stateBytes.count) vs \(json.count) bytes")
    }

    @Test func truncatedOrForeignBytesAreRefused() throws {
        let bytes = try Self.busySession().session.stateBytes
        for cut in [1, bytes.count / 2, bytes.count - 1] {
            #expect(throws: StateDecodingError.self) { try HostSession(stateBytes: Array(bytes.prefix(cut))) }
        }
        #expect(throws: StateDecodingError.self) { try HostSession(stateBytes: bytes + [0]) }
        #expect(throws: StateDecodingError.self) { try HostSession(stateBytes: Array("{\"id\":1}".utf8)) }
    }

    /// H1: `ctx` is any JSON value since state format 2; format 1 held it as a string, and a
    /// session an older todaysim stored must still load with that string.
    @Test func aFormatOneStateKeepsItsStringContext() throws {
        var config = SessionConfig(uid: "u1")
        config.analytics = AnalyticsBase(did: "d", ctx: "today")
        let current = config.stateBytes
        // Format 2 ends with the context as JSON text: marker 1, length 7 (zigzag 14), "\"today\"".
        let jsonTail: [UInt8] = [1, 14] + Array("\"today\"".utf8)
        #expect(Array(current.suffix(jsonTail.count)) == jsonTail)
        let formatOne = [0x01] + current.dropFirst().dropLast(jsonTail.count) + [1, 10] + Array("today".utf8)
        let decoded = try SessionConfig(stateBytes: Array(formatOne))
        #expect(decoded.analytics.ctx == .string("today"))
        #expect(decoded == config)
        #expect(throws: StateDecodingError.self) { try SessionConfig(stateBytes: [0x03] + current.dropFirst()) }
    }

    /// The first schema stored states as JSON, with `ctx` a plain string (`"ctx":"home"`);
    /// such a session still loads, with that string, and the JSON form round-trips any value.
    @Test func aJSONStateWithAStringContextStillLoads() throws {
        var runner = SessionRunner.make { $0.analytics = AnalyticsBase(did: "d", ctx: "home") }
        try runner.apply(.gesture(.pull(requestId: "p1")))
        let current = String(decoding: try JSONEncoder().encode(runner.session), as: UTF8.self)
        let legacy = current.replacingOccurrences(of: #""context":"\"home\"""#, with: #""ctx":"home""#)
        #expect(legacy != current, "the test rewrote the context into the old form")
        let decoded = try JSONDecoder().decode(HostSession.self, from: Data(legacy.utf8))
        #expect(decoded.config.analytics.ctx == .string("home"))
        #expect(decoded == runner.session)

        let object = SessionRunner.make { $0.analytics = AnalyticsBase(ctx: ["screen": "today", "n": 2]) }.session
        #expect(try JSONDecoder().decode(HostSession.self, from: JSONEncoder().encode(object)) == object)
    }
}

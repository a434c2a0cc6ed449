import Testing
@testable import TodayHost

/// Issue 23, item 1: the fields each control-plane body takes, per input `type`, and the
/// did-you-mean that names a typo's field. The lists are what `InputDecoding` reads: a body
/// holding every known field of its type decodes and earns no warning.
@Suite struct KnownFieldsTests {
    /// A valid value for each field a body of some type takes.
    static let samples: [String: JSON] = [
        "requestId": "r1", "text": "draft", "actionId": "a1", "url": "/embed/feeds/v1", "uid": "u2", "batchId": "b1",
        "behavior": "auto", "highlight": false, "schemaVersion": 1,
    ]

    static let gestures = ["pull", "liveWidget.created", "liveWidget.cancelled", "chat.edit", "chat.send", "dialog.choose",
                           "dialog.dismiss"]
    static let lifecycles = ["background", "foreground", "tabActivated", "socketEvent", "timerTick", "navigation",
                             "webContentTerminated", "accountSwitch", "teardown"]

    static func body(_ kind: ControlBody, type: String) throws -> JSON {
        let fields = try #require(kind.fields(type: type), "\(type) is known")
        return .object(fields.map { ($0, $0 == "type" ? .string(type) : samples[$0]!) })
    }

    @Test func everyKnownFieldOfEveryTypeDecodesWithoutAWarning() throws {
        let decoders: [(ControlBody, [String], InputDecoding.Decode)] = [
            (.gesture, Self.gestures, InputDecoding.gesture), (.lifecycle, Self.lifecycles, InputDecoding.lifecycle),
            (.command, ["todayPage.scrollToSection"], InputDecoding.command),
        ]
        for (kind, types, decode) in decoders {
            for type in types {
                let body = try Self.body(kind, type: type)
                #expect(kind.unknownFields(in: body).isEmpty, "\(type)")
                #expect(throws: Never.self) { try decode(BodyFields.object(from: Array(body.serialized().utf8))) }
            }
        }
        for move in ControlBody.clock.fields(type: nil)! {
            let body: JSON = [move: move.hasSuffix("Ms") ? 5 : true]
            #expect(ControlBody.clock.unknownFields(in: body).isEmpty)
            #expect(throws: Never.self) { try InputDecoding.clock(BodyFields.object(from: Array(body.serialized().utf8))) }
        }
        let creation: JSON = [
            "id": "s1", "uid": "u1", "label": "l", "language": "de", "platform": "android", "route": "/embed/feeds/v1",
            "loadingGate": "render", "capabilities": [], "clock": "virtual", "ttlMs": 5,
            "timing": .object(Timing.fieldKeyPaths.map { ($0.0, 3000) }),
            "analytics": ["did": "d", "sid": "s", "client_plat": "p", "ctx": ["anything": ["goes": 1]]],
        ]
        #expect(ControlBody.creation.unknownFields(in: creation).isEmpty)
        #expect(throws: Never.self) { try InputDecoding.creation(BodyFields.object(from: Array(creation.serialized().utf8))) }
    }

    /// Known fields are per type: `requestId` is a field of `foreground`, not of `background`.
    @Test func knownFieldsArePerType() {
        let background = ControlBody.lifecycle.unknownFields(in: ["type": "background", "requestId": "r1"])
        #expect(background == [FieldWarning(field: "requestId", detail: "unknown field; background takes only type")])
        #expect(ControlBody.lifecycle.unknownFields(in: ["type": "foreground", "requestId": "r1"]).isEmpty)
        #expect(ControlBody.gesture.unknownFields(in: ["type": "chat.send", "text": "x"]).map(\.field) == ["text"])
        #expect(ControlBody.gesture.unknownFields(in: ["type": "noSuchGesture", "anything": 1]).isEmpty,
                "an unknown type is refused as unknown_input before its fields matter")
    }

    /// The bodies the API documents earn no warning: a command's optional `schemaVersion: 1`
    /// (API: `{type, schemaVersion?: 1, batchId, behavior?, highlight?}`) is one of its fields.
    @Test func theDocumentedCommandBodyIsKnown() {
        #expect(ControlBody.command.unknownFields(in: [
            "type": "todayPage.scrollToSection", "schemaVersion": 1, "batchId": "b1",
        ]).isEmpty)
        #expect(ControlBody.command.unknownFields(in: ["type": "todayPage.scrollToSection", "batchID": "b1"])
            == [FieldWarning(field: "batchID", detail: "unknown field; did you mean batchId?")])
        #expect(throws: InputProblem.invalidField("schemaVersion", "must be 1 (or left out), got 2")) {
            try InputDecoding.command(BodyFields.object(from: Array(#"{"type":"todayPage.scrollToSection","schemaVersion":2,"batchId":"b1"}"#.utf8)))
        }
    }

    @Test func nestedObjectsAreCheckedButNotTheAppsContext() {
        let warnings = ControlBody.creation.unknownFields(in: [
            "uid": "u1", "timing": ["pullWatchdogMS": 1], "analytics": ["sidd": "s", "ctx": ["whatever": 1]],
        ])
        #expect(warnings.map(\.field) == ["timing.pullWatchdogMS", "analytics.sidd"])
        #expect(warnings.map(\.detail) == ["unknown field; did you mean pullWatchdogMs?", "unknown field; did you mean sid?"])
    }

    /// A case-insensitive match first, else the one known field within edit distance 2.
    @Test(arguments: [
        ("requestID", ["type", "requestId"], "requestId"),
        ("platfrom", ["uid", "platform", "route"], "platform"),
        ("reqestId", ["type", "requestId"], "requestId"),
        ("uidd", ["uid", "id"], "uid"),  // distance 1 to uid, 2 to id
        ("ix", ["id", "it"], nil),  // one edit from both: a tie names none
        ("somethingElse", ["type", "requestId"], nil),
        ("advanceMS", ["advanceMs", "toMs"], "advanceMs"),
    ] as [(String, [String], String?)])
    func didYouMean(_ typed: String, _ known: [String], _ meant: String?) {
        #expect(ControlBody.suggestion(for: typed, among: known) == meant)
    }

    @Test func editDistanceCountsOneEditPerScalar() {
        func distance(_ a: String, _ b: String) -> Int {
            Suggestion.editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars))
        }
        #expect(distance("kitten", "sitting") == 3)
        #expect(distance("", "abc") == 3)
        #expect(distance("same", "same") == 0)
        #expect(distance("ab", "ba") == 2)
    }

    /// Every type an endpoint lists is one it decodes (its fields are known), and a type it
    /// does not list has none: the list in an unknown type's refusal is the endpoint's own.
    @Test(arguments: [ControlBody.gesture, .lifecycle, .command])
    func listedTypesAreTheDecodedOnes(_ body: ControlBody) throws {
        let types = try #require(body.types)
        for type in types { #expect(body.fields(type: type) != nil, "\(type)") }
        #expect(body.fields(type: "swipe") == nil)
        #expect(body.unknownType("swipe").detail.hasSuffix(types.joined(separator: ", ")))
    }

    @Test func modeNamesInAnyCase() {
        #expect(FieldValidation(name: "strict") == .strict)
        #expect(FieldValidation(name: "WARN") == .warn)
        #expect(FieldValidation(name: "Ignore") == .ignore)
        #expect(FieldValidation(name: "lenient") == nil)
    }
}

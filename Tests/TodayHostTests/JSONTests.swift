import Foundation
import Testing
@testable import TodayHost

/// The hand-written JSON value: what Web sends is read exactly (RFC 8259), and what the host
/// emits is written in a fixed member order, so payloads and timelines are byte-for-byte stable.
@Suite struct JSONParserTests {
    @Test func objectsKeepMemberOrderAsWritten() throws {
        let value = try JSON.parse(#"{"zeta":1,"alpha":2,"mid":{"b":true,"a":false}}"#)
        #expect(value == .object([("zeta", 1), ("alpha", 2), ("mid", .object([("b", true), ("a", false)]))]))
        // Same members in another order is another value: order is part of what the host emits.
        #expect(value != (try JSON.parse(#"{"alpha":2,"zeta":1,"mid":{"b":true,"a":false}}"#)))
    }

    @Test func scalarsAndContainers() throws {
        #expect(try JSON.parse("null") == .null)
        #expect(try JSON.parse("true") == .bool(true))
        #expect(try JSON.parse("false") == .bool(false))
        #expect(try JSON.parse(#""text""#) == .string("text"))
        #expect(try JSON.parse("[]") == .array([]))
        #expect(try JSON.parse("{}") == .object([]))
        #expect(try JSON.parse(#"[1,"a",null,[{}]]"#) == .array([1, "a", .null, .array([.object([])])]))
    }

    @Test func integersWithoutFractionOrExponentAreInts() throws {
        #expect(try JSON.parse("1") == .int(1))
        #expect(try JSON.parse("0") == .int(0))
        #expect(try JSON.parse("-42") == .int(-42))
        #expect(try JSON.parse("9223372036854775807") == .int(Int64.max))
        #expect(try JSON.parse("-9223372036854775808") == .int(Int64.min))
    }

    @Test func fractionsAndExponentsAreDoubles() throws {
        #expect(try JSON.parse("1.5") == .double(1.5))
        #expect(try JSON.parse("-0.25") == .double(-0.25))
        #expect(try JSON.parse("1e3") == .double(1000))
        #expect(try JSON.parse("1E3") == .double(1000))
        #expect(try JSON.parse("2.5e-3") == .double(0.0025))
        #expect(try JSON.parse("1e+2") == .double(100))
        #expect(try JSON.parse("1.0") == .double(1.0))
        // Beyond 64 bits an integer is still a number, read as a double.
        #expect(try JSON.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        // An int and a double of the same value are different cases but the same number.
        #expect(JSON.int(1) != JSON.double(1))
        #expect(JSON.int(1).numberValue == JSON.double(1).numberValue)
    }

    @Test func simpleEscapes() throws {
        let value = try JSON.parse(#""q\" b\\ s\/ \b\f\n\r\t""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t"))
    }

    @Test func unicodeEscapes() throws {
        #expect(try JSON.parse(#""caf\u00e9""#) == .string("café"))
        #expect(try JSON.parse(#""caf\u00E9""#) == .string("café"))
        #expect(try JSON.parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try JSON.parse(#""\u4eca\u65e5""#) == .string("今日"))
    }

    @Test func surrogatePairEscapesMakeOneScalar() throws {
        let value = try JSON.parse(#""\ud83d\ude00""#)
        #expect(value == .string("😀"))
        #expect(value.stringValue?.unicodeScalars.map(\.value) == [0x1F600])
        #expect(try JSON.parse(#""\uD83D\uDE00!""#) == .string("😀!"))
    }

    @Test func rawUTF8InStringsIsKept() throws {
        #expect(try JSON.parse("\"café 今日 😀\"") == .string("café 今日 😀"))
        #expect(try JSON.parse(bytes: [0x22, 0xC3, 0xA9, 0x22]) == .string("é"))
        #expect(try JSON.parse(bytes: [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == .string("😀"))
    }

    @Test func whitespaceAroundAndBetweenTokensIsSkipped() throws {
        let value = try JSON.parse(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] ,\r\n\"b\" : null } \n")
        #expect(value == .object([("a", .array([1, 2])), ("b", .null)]))
        #expect(try JSON.parse("  7  ") == .int(7))
    }

    @Test func whitespaceIsOnlyTheFourJSONCharacters() {
        // Form feed, vertical tab and no-break space are not JSON whitespace.
        for text in ["\u{0C}1", "1\u{0B}", "[1,\u{A0}2]"] {
            #expect(throws: JSONSyntaxError.self, "\(text.debugDescription)") { try JSON.parse(text) }
        }
    }

    @Test func duplicateKeysAreKeptAndTheSubscriptReadsTheLast() throws {
        let value = try JSON.parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value["a"] == .int(3))
        #expect(value["b"] == .int(2))
        #expect(value == .object([("a", 1), ("b", 2), ("a", 3)]))
        #expect(value["missing"] == nil)
        #expect(JSON.array([1])["a"] == nil)
    }

    @Test func nestingOf512IsAcceptedAnd513IsRejected() throws {
        let arrays512 = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        _ = try JSON.parse(arrays512)
        let arrays513 = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(arrays513) }

        let objects513 = String(repeating: #"{"a":"#, count: 513) + "null" + String(repeating: "}", count: 513)
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(objects513) }

        // Far deeper input is refused, not a stack overflow.
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(deep) }
    }

    /// The depth is how many containers are nested: 512 arrays are 512 deep whatever the
    /// innermost one holds, so a scalar inside the 512th is not "deeper than 512".
    @Test func depthCountsContainersNotTheScalarInside() throws {
        let arrays512WithScalar = String(repeating: "[", count: 512) + "0" + String(repeating: "]", count: 512)
        #expect(throws: Never.self, "512 arrays around 0") { try JSON.parse(arrays512WithScalar) }
        let objects512 = String(repeating: #"{"a":"#, count: 512) + "true" + String(repeating: "}", count: 512)
        #expect(throws: Never.self, "512 objects around true") { try JSON.parse(objects512) }
        // One more container is deeper than 512.
        let arrays513WithScalar = String(repeating: "[", count: 513) + "0" + String(repeating: "]", count: 513)
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(arrays513WithScalar) }
    }
}

@Suite struct JSONRejectionTests {
    static let invalidTexts: [String] = [
        // trailing commas
        "[1,]", #"{"a":1,}"#, "[1,,2]", "[,1]",
        // leading zeros and other malformed numbers
        "01", "-01", "00", "0123", "+1", ".5", "1.", "1.e3", "1e", "1e+", "-", "--1", "0x10",
        // not numbers in JSON
        "NaN", "-NaN", "Infinity", "-Infinity", "nan", "[NaN]",
        // lone or broken surrogates
        #""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ud83d\ud83d""#,
        // unterminated strings and escapes
        #""abc"#, #"""#, #"["a]"#, #""\"#, #""\u12""#, #""\u12G4""#, #""\x41""#, #""\'""#,
        // raw control characters inside a string
        "\"a\u{01}b\"", "\"line\nbreak\"", "\"tab\there\"", "\"\u{1F}\"", "\"\u{0}\"",
        // trailing garbage
        "{} x", "[1] [2]", "1 2", "truex", "nullnull", #""a""b""#, "{}}", "[1]]",
        // not JSON at all
        "", "   ", "'a'", "{a:1}", #"{"a" 1}"#, #"{"a":}"#, #"{1:2}"#, "[1 2]", "tru", "True", "undefined",
        "// comment\n1", "/* c */1", "[", "{", #"{"a":1"#,
    ]

    @Test(arguments: invalidTexts)
    func invalidTextIsRejected(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(text) }
    }

    static let invalidUTF8: [[UInt8]] = [
        [0x22, 0xFF, 0x22],                    // never valid in UTF-8
        [0x22, 0x80, 0x22],                    // continuation byte with no lead
        [0x22, 0xC0, 0x80, 0x22],              // overlong NUL
        [0x22, 0xC1, 0xBF, 0x22],              // overlong
        [0x22, 0xE0, 0x80, 0xAF, 0x22],        // overlong 3-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],        // UTF-8 encoded surrogate U+D800
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],  // lead byte out of range
        [0x22, 0xE2, 0x82, 0x22],              // truncated 3-byte sequence
        [0x22, 0xC3],                          // truncated at end of input
        [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D],  // bad continuation inside a key
        [0xFF],                                // outside any string
    ]

    @Test(arguments: invalidUTF8)
    func invalidUTF8BytesAreRejected(_ bytes: [UInt8]) {
        #expect(throws: JSONSyntaxError.self) { try JSON.parse(bytes: bytes) }
    }

    @Test func errorsSayWhereReadingStopped() {
        #expect(throws: JSONSyntaxError(offset: 3, problem: "unexpected character")) { try JSON.parse("[1,]") }
        #expect(throws: JSONSyntaxError(offset: 4, problem: "unexpected text after the value")) { try JSON.parse("[1] x") }
        #expect(throws: JSONSyntaxError(offset: 1, problem: "unexpected text after the value")) { try JSON.parse("01") }
    }
}

@Suite struct JSONWriterTests {
    /// A string with no escape is read straight from its bytes, one with an escape scalar by
    /// scalar: over random strings of both kinds (ASCII, multi-byte, quotes, control
    /// characters, escapes first, last and between), what is written reads back the same, and
    /// so does the text as a member's key and value.
    @Test func randomStringsReadBackAsWritten() throws {
        let pieces = ["a", "Z", "0", " ", "é", "今日", "😀", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "\u{2028}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(try JSON.parse(JSON.string(text).serialized()) == .string(text), "\(text.debugDescription)")
            let object = JSON.object([(text, .string(text))])
            #expect(try JSON.parse(object.serialized()) == object, "\(text.debugDescription)")
        }
    }

    /// A compact document of every kind of value, written as the writer writes it.
    static let representative = #"{"type":"todayPage.refreshResult","schemaVersion":1,"requestId":"r-1","mode":"soft","status":"succeeded","elapsedMs":12.5,"ratio":-0.25,"big":9007199254740993,"neg":-7,"ok":true,"no":false,"nothing":null,"text":"café \"q\" \\ 😀 今日","lines":"a\nb\tc\r","empty":{},"none":[],"nested":{"z":[1,[2,{"y":null}]],"a":{"b":{"c":"d"}}}}"#

    @Test func compactDocumentRoundTripsByteForByte() throws {
        let parsed = try JSON.parse(Self.representative)
        #expect(parsed.serialized() == Self.representative)
        #expect(Array(parsed.serialized().utf8) == Array(Self.representative.utf8))
        #expect(try JSON.parse(parsed.serialized()) == parsed)
    }

    @Test func writesCompactWithMembersInStoredOrder() {
        let value: JSON = ["b": 1, "a": [true, nil, "x"], "c": ["d": .double(2.5)]]
        #expect(value.serialized() == #"{"b":1,"a":[true,null,"x"],"c":{"d":2.5}}"#)
    }

    @Test func numbers() {
        #expect(JSON.int(-12).serialized() == "-12")
        #expect(JSON.int(Int64.max).serialized() == "9223372036854775807")
        #expect(JSON.double(1.5).serialized() == "1.5")
        // Integral doubles print as JavaScript prints them.
        #expect(JSON.double(1000).serialized() == "1000")
        #expect(JSON.double(-3).serialized() == "-3")
        // JSON has no NaN or Infinity; JSON.stringify writes null for them.
        #expect(JSON.double(.nan).serialized() == "null")
        #expect(JSON.double(.infinity).serialized() == "null")
        #expect(JSON.double(-.infinity).serialized() == "null")
    }

    @Test func quotesAndBackslashesAreEscaped() {
        #expect(JSON.string(#"say "hi" \ bye"#).serialized() == #""say \"hi\" \\ bye""#)
        // `/` needs no escape.
        #expect(JSON.string("a/b").serialized() == #""a/b""#)
    }

    @Test func controlCharactersAreEscapedOnOutput() throws {
        #expect(JSON.string("a\nb").serialized() == #""a\nb""#)
        #expect(JSON.string("a\rb").serialized() == #""a\rb""#)
        #expect(JSON.string("a\tb").serialized() == #""a\tb""#)
        #expect(JSON.string("\u{0}").serialized() == #""\u0000""#)
        #expect(JSON.string("\u{01}").serialized() == #""\u0001""#)
        #expect(JSON.string("\u{1F}").serialized() == #""\u001f""#)
        // Every control character comes out escaped: no raw byte below 0x20, and it reads back.
        for scalar in (UInt32(0)..<0x20).compactMap({ Unicode.Scalar($0) }) {
            let text = "<\(Character(scalar))>"
            let written = JSON.string(text).serialized()
            #expect(!written.utf8.contains { $0 < 0x20 }, "U+\(String(scalar.value, radix: 16))")
            #expect(try JSON.parse(written) == .string(text))
        }
        // DEL is not a JSON control character.
        #expect(JSON.string("\u{7F}").serialized() == "\"\u{7F}\"")
    }

    @Test func nonASCIIIsWrittenAsUTF8() {
        #expect(JSON.string("é").serialized() == "\"é\"")
        #expect(Array(JSON.string("😀").serialized().utf8) == [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22])
    }

    @Test func escapedInputIsWrittenInItsPlainForm() throws {
        #expect(try JSON.parse(#""caf\u00e9 \ud83d\ude00 \/""#).serialized() == "\"café 😀 /\"")
    }

    @Test func duplicateMembersAreWrittenAsStored() {
        let value: JSON = .object([("a", 1), ("a", 2)])
        #expect(value.serialized() == #"{"a":1,"a":2}"#)
    }
}

/// Foundation's reader agrees with what the writer writes: the host's output is plain JSON.
@Suite struct JSONFoundationCrossCheckTests {
    static let documents: [JSON] = [
        ["type": "todayPage.refreshRequested", "schemaVersion": 1, "requestId": "r-1", "reason": "user_pull"],
        ["a": [1, .double(2.5), .double(-0.125), .double(1e21), .double(1e-7), 123456789012], "b": ["c": nil, "d": true, "e": false]],
        ["text": "café \"quoted\" \\ / 😀 今日 \u{2028}", "controls": "\u{0}\u{01}\u{08}\u{0C}\n\r\t\u{1F}\u{7F}"],
        [[], [:], [[[]]], ["k": [:]]],
        ["deep": ["deeper": ["deepest": ["value": -9_007_199_254_740_991]]]],
        .string("just a string"),
    ]

    @Test(arguments: documents)
    func foundationReadsTheSerializedTextAsAnEqualValue(_ document: JSON) throws {
        let text = document.serialized()
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        #expect(Self.matches(object, document), "\(text)")
    }

    @Test func parsedFoundationOutputMatchesTheOriginalValue() throws {
        // The other direction: text Foundation wrote reads back as the same value.
        let original: [String: Any] = ["name": "café 😀", "count": 3, "ratio": 0.5, "list": [true, "x"], "none": NSNull()]
        let data = try JSONSerialization.data(withJSONObject: original, options: [.sortedKeys])
        let parsed = try JSON.parse(bytes: Array(data))
        #expect(parsed == .object([("count", 3), ("list", [true, "x"]), ("name", "café 😀"), ("none", .null),
                                   ("ratio", .double(0.5))]))
    }

    /// The comparison itself can fail: different values, members or types do not match.
    @Test func theComparisonTellsDifferentValuesApart() throws {
        let object = try JSONSerialization.jsonObject(with: Data(#"{"a":[1,"x",true,null]}"#.utf8))
        #expect(Self.matches(object, ["a": [1, "x", true, nil]]))
        #expect(!Self.matches(object, ["a": [2, "x", true, nil]]))
        #expect(!Self.matches(object, ["a": [1, "y", true, nil]]))
        #expect(!Self.matches(object, ["a": [1, "x", true]]))
        #expect(!Self.matches(object, ["b": [1, "x", true, nil]]))
        #expect(!Self.matches(object, ["a": [1, "x", true, nil], "b": 1]))
        #expect(!Self.matches(object, ["a": [1, "x", true, "null"]]))
        #expect(!Self.matches(object, ["a": [1, 1, true, nil]]))
    }

    /// Whether a Foundation value is the same JSON value (objects compared as sets of members).
    static func matches(_ foundation: Any, _ json: JSON) -> Bool {
        switch json {
        case .null:
            return foundation is NSNull
        case let .bool(value):
            guard let number = foundation as? NSNumber else { return false }
            return number.boolValue == value && (number.intValue == 0 || number.intValue == 1)
        case let .int(value):
            guard let number = foundation as? NSNumber else { return false }
            return number.int64Value == value && number.doubleValue == Double(value)
        case let .double(value):
            guard let number = foundation as? NSNumber else { return false }
            return number.doubleValue == value
        case let .string(value):
            guard let string = foundation as? String else { return false }
            // Compare scalar by scalar: String == would equate canonically equivalent text.
            return Array(string.unicodeScalars) == Array(value.unicodeScalars)
        case let .array(elements):
            guard let array = foundation as? [Any], array.count == elements.count else { return false }
            return zip(array, elements).allSatisfy { matches($0, $1) }
        case let .object(members):
            guard let dictionary = foundation as? [String: Any], dictionary.count == members.count else { return false }
            return members.allSatisfy { key, value in dictionary[key].map { matches($0, value) } ?? false }
        }
    }
}

import Testing
@testable import TodayHost

/// H4: server-made request ids are name-based UUIDs (RFC 9562 version 5) of the session id and
/// a counter, so replaying the same inputs yields the same ids.
/// Expected values were computed with Python's `uuid.uuid5`, not with the code under test.
@Suite struct RequestIdTests {
    /// RFC 9562's DNS namespace, 6ba7b810-9dad-11d1-80b4-00c04fd430c8.
    static let dnsNamespace: [UInt8] = [
        0x6B, 0xA7, 0xB8, 0x10, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
    ]

    static let dnsVectors: [(name: String, uuid: String)] = [
        ("python.org", "886313e1-3b8a-5372-9b90-0c9aee199e5d"),
        ("www.example.com", "2ed6657d-e927-568b-95e1-2665a8aea6a2"),
        ("", "4ebd0208-8328-5d69-8c44-ec50939c0967"),
        ("é", "ebfe0af8-3997-5ade-b634-ba92cf69f557"),
        // 16-byte namespace + 39, 40, 48 and 200 bytes: around SHA-1's padding boundaries.
        (String(repeating: "a", count: 39), "5824f981-4282-59d4-9716-acb6d741350e"),
        (String(repeating: "a", count: 40), "39f39c20-db47-5131-8879-62f8f67f9014"),
        (String(repeating: "a", count: 48), "7280cc42-274a-5c4a-91fc-ae23f853eeb7"),
        (String(repeating: "a", count: 200), "fe30bfa6-ef90-59b3-b108-118411d0f0ab"),
    ]

    @Test func h4_uuidV5MatchesKnownVectorsInTheDNSNamespace() {
        for vector in Self.dnsVectors {
            #expect(RequestIdFactory.uuidV5(namespace: Self.dnsNamespace, name: vector.name) == vector.uuid,
                    "name of \(vector.name.utf8.count) bytes")
        }
    }

    @Test func h4_todaysimNamespaceIsTheFixedUUID() {
        #expect(RequestIdFactory.namespace == [
            0x6F, 0x1C, 0x2B, 0x9E, 0x53, 0x0A, 0x4D, 0x8B, 0x9C, 0x41, 0x7E, 0x25, 0xD3, 0x60, 0xB8, 0x17,
        ])
    }

    /// uuid.uuid5(UUID("6f1c2b9e-530a-4d8b-9c41-7e25d360b817"), "s1/request/1") and friends.
    @Test func h4_requestIdIsUUIDv5OfSessionAndCounterInTodaysimNamespace() {
        #expect(RequestIdFactory.uuidV5(name: "s1/request/1") == "12551c98-30db-5119-8414-03b1ae7f7fe3")
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 1) == "12551c98-30db-5119-8414-03b1ae7f7fe3")
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 2) == "e92b6d85-aa4b-5e3e-bc36-7bf06ef307fa")
        #expect(RequestIdFactory.requestId(sessionId: "s2", counter: 1) == "21403435-bd81-5639-b502-ccdfe0684aab")
    }

    @Test func h4_sameSessionAndCounterGiveTheSameId() {
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 7) == RequestIdFactory.requestId(sessionId: "s1", counter: 7))
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 7) != RequestIdFactory.requestId(sessionId: "s1", counter: 8))
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 7) != RequestIdFactory.requestId(sessionId: "s2", counter: 7))
        // No accidental collisions across the first thousand counters of a session.
        let ids = (1...1000).map { RequestIdFactory.requestId(sessionId: "s1", counter: $0) }
        #expect(Set(ids).count == 1000)
    }

    @Test func h4_idsAreLowercaseCanonicalVersion5Variant10() {
        let names = ["s1/request/1", "s1/request/2", "", "python.org"] + (1...50).map { "s9/request/\($0)" }
        for name in names {
            let id = RequestIdFactory.uuidV5(name: name)
            let groups = id.split(separator: "-", omittingEmptySubsequences: false)
            #expect(groups.map(\.count) == [8, 4, 4, 4, 12], "\(id)")
            #expect(id.allSatisfy { "0123456789abcdef-".contains($0) }, "\(id)")
            // Version nibble: the first of the third group is 5.
            #expect(groups.count == 5 && groups[2].first == "5", "\(id)")
            // Variant bits 10: the first of the fourth group is 8, 9, a or b.
            #expect(groups.count == 5 && groups[3].first.map { "89ab".contains($0) } == true, "\(id)")
        }
    }

    /// H4 through a session: server-made ids follow the counter, the same inputs give the same ids.
    @Test func h4_sessionsReplayingTheSameInputsMakeTheSameIds() throws {
        func play() throws -> [String] {
            var runner = SessionRunner.make()
            try runner.apply(.lifecycle(.tabActivated(requestId: nil)))
            try runner.apply(.lifecycle(.socketEvent(requestId: nil)))
            return runner.pending
        }
        let first = try play()
        #expect(first == ["12551c98-30db-5119-8414-03b1ae7f7fe3", "e92b6d85-aa4b-5e3e-bc36-7bf06ef307fa"])
        #expect(try play() == first)
    }
}

import Testing
@testable import TodayHost

/// SHA-1 (the server-made request ids of H4, RFC 9562 version 5, and `Idempotency-Key`
/// fingerprints) against FIPS 180-4's answers, at every padding boundary: one block, the length
/// spilling into a second (56), exactly a block (64), and several.
@Suite struct RequestIdsTests {
    /// `(n, sha1(bytes (i * 7 + 3) % 256 for i < n))`, from Python's hashlib.
    static let vectors: [(Int, String)] = [
        (0, "da39a3ee5e6b4b0d3255bfef95601890afd80709"), (3, "4201de9f98cb0a9b8cf52398be7802b55d45266a"),
        (55, "ddf57317ef34bfee3b6df83d359098930eb278bc"), (56, "a0d492bb0fc889d0eca3bc137066ab6f4f74f369"),
        (63, "c55856749bef509bdfe6bfebfc7bf4e793e82132"), (64, "bede92be29c3874e1b54ddc77988d606fc857a8e"),
        (65, "b05a80522b053d6dc7e0a517d0e70212c7dad11f"), (119, "504e27376a6e0f0dba8295b85cb25dc4dfa17d23"),
        (120, "82134b02fb3f702491be9bed581eeab59334acb2"), (200, "892b673ca3c696ab13ab8aab3cf3abfbc3aaeb3b"),
    ]

    @Test(arguments: vectors)
    func digestsMatchTheStandardAtEveryPaddingBoundary(length: Int, expected: String) {
        let message = (0..<length).map { UInt8(($0 * 7 + 3) % 256) }
        let hex = SHA1.digest(message).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(hex == expected)
    }

    /// `abc` (FIPS 180-4's example) and a server-made id as the engine mints it: the same bytes
    /// a stored session's timeline holds (`Scripts/compare-binaries` compares whole runs).
    @Test func theStandardsExampleAndAMintedId() {
        #expect(SHA1.digest(Array("abc".utf8)) == [0xA9, 0x99, 0x3E, 0x36, 0x47, 0x06, 0x81, 0x6A, 0xBA, 0x3E,
                                                   0x25, 0x71, 0x78, 0x50, 0xC2, 0x6C, 0x9C, 0xD0, 0xD8, 0x9D])
        #expect(RequestIdFactory.requestId(sessionId: "s1", counter: 1).count == 36)
    }
}

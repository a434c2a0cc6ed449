/// SHA-1 (FIPS 180-4), for name-based UUIDs (RFC 9562 version 5: the ids below) and the server's
/// fingerprints of requests with an `Idempotency-Key`;
/// not for security.
package enum SHA1 {
    package static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        // The message, 0x80, zeros to 56 mod 64, and its length in bits: whole 64-byte blocks.
        let blocks = (message.count + 8) / 64 + 1
        var padded = [UInt8](repeating: 0, count: blocks * 64)
        padded.replaceSubrange(0..<message.count, with: message)
        padded[message.count] = 0x80
        let bitLength = UInt64(message.count) &* 8
        for index in 0..<8 { padded[padded.count - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> UInt64(index * 8)) }

        // One message schedule, reused by every block (a hash per minted id and per keyed request).
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            padded.withUnsafeBufferPointer { bytes in
                for chunk in stride(from: 0, to: bytes.count, by: 64) {
                    for i in 0..<16 {
                        let b = chunk + i * 4
                        w[i] = UInt32(bytes[b]) << 24 | UInt32(bytes[b + 1]) << 16 | UInt32(bytes[b + 2]) << 8 | UInt32(bytes[b + 3])
                    }
                    for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
                    var (a, b, c, d, e) = h
                    for i in 0..<20 {
                        let temp = rotl(a, 5) &+ ((b & c) | (~b & d)) &+ e &+ 0x5A82_7999 &+ w[i]
                        (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
                    }
                    for i in 20..<40 {
                        let temp = rotl(a, 5) &+ (b ^ c ^ d) &+ e &+ 0x6ED9_EBA1 &+ w[i]
                        (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
                    }
                    for i in 40..<60 {
                        let temp = rotl(a, 5) &+ ((b & c) | (b & d) | (c & d)) &+ e &+ 0x8F1B_BCDC &+ w[i]
                        (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
                    }
                    for i in 60..<80 {
                        let temp = rotl(a, 5) &+ (b ^ c ^ d) &+ e &+ 0xCA62_C1D6 &+ w[i]
                        (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
                    }
                    h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
                }
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(20)
        for word in [h.0, h.1, h.2, h.3, h.4] {
            out += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return out
    }

    private static func rotl(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}

/// Server-made request ids (H4): a name-based UUID of the session id and a counter, so the
/// same inputs always give the same ids.
package enum RequestIdFactory {
    /// The namespace of todaysim's request ids (a fixed random UUID).
    package static let namespace: [UInt8] = [
        0x6F, 0x1C, 0x2B, 0x9E, 0x53, 0x0A, 0x4D, 0x8B, 0x9C, 0x41, 0x7E, 0x25, 0xD3, 0x60, 0xB8, 0x17,
    ]

    package static func requestId(sessionId: String, counter: Int) -> String {
        uuidV5(name: "\(sessionId)/request/\(counter)")
    }

    /// RFC 9562 §5.5: SHA-1 of namespace + name, version 5, variant 10.
    package static func uuidV5(namespace: [UInt8] = RequestIdFactory.namespace, name: String) -> String {
        var bytes = Array(SHA1.digest(namespace + Array(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        // 8-4-4-4-12 lower-case hex digits.
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        }
        return String(decoding: text, as: UTF8.self)
    }
}

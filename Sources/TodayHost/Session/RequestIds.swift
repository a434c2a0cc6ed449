/// SHA-1 (FIPS 180-4), for name-based UUIDs (RFC 9562 version 5: the ids below) and the server's
/// fingerprints of requests with an `Idempotency-Key`;
/// not for security.
package enum SHA1 {
    package static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }

        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let b = chunk + i * 4
                w[i] = UInt32(padded[b]) << 24 | UInt32(padded[b + 1]) << 16 | UInt32(padded[b + 2]) << 8 | UInt32(padded[b + 3])
            }
            for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
            var (a, b, c, d, e) = h
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, rotl(b, 30), a, temp)
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        return [h.0, h.1, h.2, h.3, h.4].flatMap { word in
            [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
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
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }
}

import CMicroHTTPD

/// Request smuggling (issue 12, item 4; RFC 9112 §6.1, §6.3, §2.2, §5.1): where a request's
/// body ends must be read the same way by every HTTP hop, or the rest of a body runs as a
/// second request. libmicrohttpd 0.9.75 takes the first `Content-Length` of several, lets
/// `Transfer-Encoding` win over `Content-Length` and keeps the connection, reads any
/// `Transfer-Encoding` but exactly `chunked` as a body without end (so the request is never
/// answered), and keeps a bare CR inside a header value. It shows the application every
/// header, duplicates included, on the first (headers-only) call — where this refuses what is
/// ambiguous; an answer queued then also closes the connection, so nothing after it is read.
enum RequestFraming {
    typealias Header = (name: [UInt8], value: [UInt8])

    /// The refusal for a request whose framing is ambiguous, or `nil` for one that is not.
    static func refusal(_ headers: [Header]) -> APIError? {
        var scan = Scan()
        for header in headers {
            header.name.withUnsafeBufferPointer { name in
                header.value.withUnsafeBufferPointer { value in scan.add(name: name, value: value) }
            }
        }
        return scan.refusal
    }

    /// The same for a request libmicrohttpd holds: every header, duplicates included.
    static func refusal(of connection: OpaquePointer) -> APIError? {
        var scan = Scan()
        withUnsafeMutablePointer(to: &scan) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, scanHeader, UnsafeMutableRawPointer(pointer))
        }
        return scan.refusal
    }

    /// Reads the headers one by one without copying any but the two framing ones.
    struct Scan {
        private var broken: APIError?
        private var lengths: [[UInt8]] = []
        private var encodings: [[UInt8]] = []

        mutating func add(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
            guard broken == nil else { return }
            if name.contains(Self.carriageReturn) || value.contains(Self.carriageReturn) {
                broken = .malformedRequest("a header holds a bare CR (RFC 9112 §2.2)")
            } else if name.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
                broken = .malformedRequest("whitespace between a header's name and its colon (RFC 9112 §5.1)")
            } else if Self.equalsIgnoringCase(name, Self.contentLength) {
                lengths.append(Array(value))
            } else if Self.equalsIgnoringCase(name, Self.transferEncoding) {
                encodings.append(Array(value))
            }
        }

        var refusal: APIError? {
            if let broken { return broken }
            if !encodings.isEmpty {
                if !lengths.isEmpty {
                    return .malformedRequest("both Transfer-Encoding and Content-Length (RFC 9112 §6.3)")
                }
                // Exactly what libmicrohttpd reads as chunked: one header whose whole value is
                // `chunked` in any case. Anything else it would read as a body without end.
                let chunked = encodings.count == 1 && encodings[0].withUnsafeBufferPointer { Self.equalsIgnoringCase($0, Self.chunked) }
                guard chunked else { return .unsupportedTransferEncoding }
            }
            // The same length repeated frames the body the same way whichever one a hop takes.
            if Set(lengths).count > 1 {
                return .malformedRequest("Content-Length headers with different values (RFC 9112 §6.3)")
            }
            return nil
        }

        private static let carriageReturn = UInt8(ascii: "\r")
        private static let contentLength = Array("content-length".utf8)
        private static let transferEncoding = Array("transfer-encoding".utf8)
        private static let chunked = Array("chunked".utf8)

        /// `lowercase` is lowercase ASCII.
        private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: [UInt8]) -> Bool {
            bytes.count == lowercase.count && zip(bytes, lowercase).allSatisfy { byte, wanted in
                byte == wanted || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) && byte + 32 == wanted
            }
        }
    }
}

// The iterator's context is the caller's `Scan`, alive for the whole (synchronous) call.
private let scanHeader: MHD_KeyValueIteratorN = { context, _, key, keySize, value, valueSize in
    guard let context, let key else { return .NO }
    let scan = context.assumingMemoryBound(to: RequestFraming.Scan.self)
    key.withMemoryRebound(to: UInt8.self, capacity: keySize) { name in
        let nameBytes = UnsafeBufferPointer(start: name, count: keySize)
        guard let value else { return scan.pointee.add(name: nameBytes, value: UnsafeBufferPointer(start: nil, count: 0)) }
        value.withMemoryRebound(to: UInt8.self, capacity: valueSize) { valueBytes in
            scan.pointee.add(name: nameBytes, value: UnsafeBufferPointer(start: valueBytes, count: valueSize))
        }
    }
    return .YES
}

/// A value bound to a statement parameter (`$1`, `$2`, …).
///
/// On the wire: `.bytes` goes in binary format, declared `bytea` — no escaping, zero bytes and
/// all. `.int64` goes as text, which the server parses as whatever type it inferred for the
/// parameter: a prepared statement's parameter types come from its context (`version = $1` on a
/// `bigint` is `int8`, but `$1 + 1` or a comparison with an `integer` column is `int4`), and an
/// 8-byte binary value sent for an `int4` parameter is a protocol error, while text is range
/// checked like any literal. Twenty characters instead of eight bytes is nothing beside the round
/// trip.
package enum PostgresValue: Sendable, Equatable {
    case null
    case int64(Int64)
    case text(String)
    case bytes([UInt8])

    package static func text(_ value: String?) -> PostgresValue { value.map(PostgresValue.text) ?? .null }
    package static func int(_ value: Int) -> PostgresValue { .int64(Int64(value)) }

    /// Type OIDs of `pg_type` this wrapper reads and writes (fixed by PostgreSQL's catalog).
    enum TypeOID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let text: UInt32 = 25
        /// `name`, `text`, `json`, `unknown`, `bpchar`, `varchar`.
        static let textLike: Set<UInt32> = [19, 25, 114, 705, 1042, 1043]
    }
}

/// The C arrays `PQexecParams`/`PQexecPrepared` take, built from `PostgresValue`s and valid only
/// inside `withParameters`.
enum PostgresParameters {
    /// Calls `body(count, types, values, lengths, formats)`; `types` declares `bytea` for bytes
    /// and leaves the rest (0) to the server's inference.
    static func withParameters<T>(
        _ values: [PostgresValue],
        _ body: (Int32, [UInt32], [UnsafePointer<CChar>?], [Int32], [Int32]) -> T
    ) -> T {
        var encoded: [[CChar]] = []
        var types: [UInt32] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for value in values {
            switch value {
            case .null:
                encoded.append([])
                types.append(0); lengths.append(0); formats.append(0)
            case let .int64(number):
                encoded.append(Array(String(number).utf8CString))
                types.append(0); lengths.append(0); formats.append(0)
            case let .text(text):
                encoded.append(Array(text.utf8CString))
                types.append(0); lengths.append(0); formats.append(0)
            case let .bytes(bytes):
                // libpq reads a binary value's length, not a terminator; empty still needs an address.
                encoded.append(bytes.isEmpty ? [0] : bytes.map { CChar(bitPattern: $0) })
                types.append(PostgresValue.TypeOID.bytea); lengths.append(Int32(bytes.count)); formats.append(1)
            }
        }
        // One buffer holds every value for the duration of the call.
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, encoded.reduce(0) { $0 + $1.count }))
        defer { buffer.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var offset = 0
        for (value, bytes) in zip(values, encoded) {
            guard value != .null else { pointers.append(nil); continue }
            bytes.withUnsafeBufferPointer { source in
                (buffer + offset).initialize(from: source.baseAddress!, count: source.count)
            }
            pointers.append(UnsafePointer(buffer + offset))
            offset += bytes.count
        }
        return body(Int32(values.count), types, pointers, lengths, formats)
    }
}

/// Arrays as text literals (`$1::bigint[]`, `text[]`, `bytea[]`): a whole batch of rows goes
/// in one statement through `unnest`.
extension PostgresValue {
    /// A `bigint[]` literal; `nil` is `NULL`.
    package static func int64Array(_ values: [Int64?]) -> PostgresValue {
        .text("{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}")
    }

    /// A text array literal of ids (`[A-Za-z0-9._-]` and the hidden `removing/`, `forking/`
    /// prefixes: nothing to quote, but quoted anyway).
    package static func textArray(_ values: [String]) -> PostgresValue {
        // Typed step by step: as one expression it took 3 s of every build to type-check.
        let quoted: [String] = values.map { (value: String) -> String in
            let escaped: String = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(escaped)\""
        }
        return .text("{\(quoted.joined(separator: ","))}")
    }

    /// A `bytea[]` array literal in text form: each element `\x` and hex, quoted.
    package static func byteaArray(_ values: [[UInt8]]) -> PostgresValue {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (index, bytes) in values.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text += Array("\"\\\\x".utf8)
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            text.append(UInt8(ascii: "\""))
        }
        text.append(UInt8(ascii: "}"))
        return .text(String(decoding: text, as: UTF8.self))
    }
}

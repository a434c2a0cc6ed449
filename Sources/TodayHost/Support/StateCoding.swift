/// A compact binary form of what the store keeps (a session's `SessionSnapshot`, a request
/// record) for its hot path: a write encodes the whole state, and Foundation's `JSONEncoder`
/// costs ~45 µs for it where this costs a few. Every stored type writes its fields in
/// declaration order; a round-trip test over randomized sessions proves it loses nothing.
package protocol StateCodable {
    func encode(to writer: inout StateWriter)
    init(from reader: inout StateReader) throws(StateDecodingError)
}

package struct StateDecodingError: Error, Equatable, CustomStringConvertible {
    package var offset: Int
    package var problem: String

    package var description: String { "undecodable state at byte \(offset): \(problem)" }
}

package struct StateWriter {
    package private(set) var bytes: [UInt8] = []

    package init() { bytes.reserveCapacity(1024) }

    /// Zig-zag varint.
    package mutating func int(_ value: Int64) {
        var encoded = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        while encoded >= 0x80 {
            bytes.append(UInt8(encoded & 0x7F) | 0x80)
            encoded >>= 7
        }
        bytes.append(UInt8(encoded))
    }

    package mutating func int(_ value: Int) { int(Int64(value)) }

    package mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            int(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    package mutating func optional<T>(_ value: T?, _ write: (inout StateWriter, T) -> Void) {
        guard let value else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        write(&self, value)
    }

    package mutating func array<T>(_ values: [T], _ write: (inout StateWriter, T) -> Void) {
        int(values.count)
        for value in values { write(&self, value) }
    }

    package mutating func value<T: StateCodable>(_ value: T) { value.encode(to: &self) }

    package mutating func raw<T: RawRepresentable>(_ value: T) where T.RawValue == String { string(value.rawValue) }

    /// A JSON value as its serialized text (it is rare in a state: analytics `ctx`).
    package mutating func json(_ value: JSON) { string(value.serialized()) }
}

package struct StateReader {
    let bytes: [UInt8]
    var index: Int
    /// The format the bytes were written in (`StateFormat`): a type whose fields changed reads
    /// an older layout by it.
    package internal(set) var format = StateFormat.version

    package init(_ bytes: [UInt8], from index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    package var isAtEnd: Bool { index == bytes.count }

    func error(_ problem: String) -> StateDecodingError { StateDecodingError(offset: index, problem: problem) }

    mutating func byte() throws(StateDecodingError) -> UInt8 {
        guard index < bytes.count else { throw error("unexpected end") }
        defer { index += 1 }
        return bytes[index]
    }

    package mutating func int64() throws(StateDecodingError) -> Int64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw error("varint too long") }
            result |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { break }
            shift += 7
        }
        return Int64(bitPattern: result >> 1) ^ -Int64(bitPattern: result & 1)
    }

    package mutating func int() throws(StateDecodingError) -> Int { Int(try int64()) }

    package mutating func bool() throws(StateDecodingError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw error("not a boolean")
        }
    }

    package mutating func string() throws(StateDecodingError) -> String {
        let count = try int()
        guard count >= 0, index + count <= bytes.count else { throw error("string past the end") }
        defer { index += count }
        return String(decoding: bytes[index..<(index + count)], as: UTF8.self)
    }

    package mutating func optional<T>(_ read: (inout StateReader) throws(StateDecodingError) -> T) throws(StateDecodingError) -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw error("not an optional marker")
        }
    }

    package mutating func array<T>(_ read: (inout StateReader) throws(StateDecodingError) -> T) throws(StateDecodingError) -> [T] {
        let count = try int()
        guard count >= 0, count <= bytes.count - index else { throw error("array longer than the data") }
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }

    package mutating func value<T: StateCodable>(_: T.Type = T.self) throws(StateDecodingError) -> T {
        try T(from: &self)
    }

    package mutating func raw<T: RawRepresentable>(_: T.Type = T.self) throws(StateDecodingError) -> T where T.RawValue == String {
        let text = try string()
        guard let value = T(rawValue: text) else { throw error("unknown \(T.self) \(text)") }
        return value
    }

    package mutating func json() throws(StateDecodingError) -> JSON {
        let text = try string()
        do { return try JSON.parse(text) } catch { throw self.error("not JSON: \(error)") }
    }
}

extension StateCodable {
    /// The binary form with its format byte.
    package var stateBytes: [UInt8] {
        var writer = StateWriter()
        writer.byte(StateFormat.version)
        encode(to: &writer)
        return writer.bytes
    }

    package init(stateBytes: [UInt8]) throws(StateDecodingError) {
        var reader = StateReader(stateBytes)
        let format = try reader.byte()
        guard StateFormat.readable.contains(format) else { throw reader.error("unknown state format \(format)") }
        reader.format = format
        self = try Self(from: &reader)
        guard reader.isAtEnd else { throw reader.error("trailing bytes") }
    }
}

package enum StateFormat {
    /// The first byte of a binary state (a JSON state starts with `{`).
    package static let version: UInt8 = 0x02
    /// Every format this build reads: 1 stored analytics `ctx` as a string (it is any JSON
    /// value since 2), so sessions written by an older todaysim keep working.
    package static let readable: ClosedRange<UInt8> = 0x01...0x02
}

extension Deadline: StateCodable {
    package func encode(to writer: inout StateWriter) {
        writer.int(dueAtMs)
        writer.int(armedInStep)
    }

    package init(from reader: inout StateReader) throws(StateDecodingError) {
        self.init(dueAtMs: try reader.int64(), armedInStep: try reader.int())
    }
}

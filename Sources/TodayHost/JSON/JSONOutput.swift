/// Writes JSON text straight into bytes, for documents encoded on every request (the session
/// view), where building a `JSON` tree first would cost more than the writing.
package struct JSONOutput {
    package private(set) var bytes: [UInt8] = []
    /// Per open container: whether the next member is its first.
    private var first: [Bool] = []
    private var afterKey = false

    package init(capacity: Int = 2048) { bytes.reserveCapacity(capacity) }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if let isFirst = first.last {
            if !isFirst { bytes.append(UInt8(ascii: ",")) }
            first[first.count - 1] = false
        }
    }

    package mutating func beginObject() { open(UInt8(ascii: "{")) }

    package mutating func endObject() { close(UInt8(ascii: "}")) }

    package mutating func beginArray() { open(UInt8(ascii: "[")) }

    package mutating func endArray() { close(UInt8(ascii: "]")) }

    /// An object or array begins: its first member needs no separator.
    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        first.append(true)
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        first.removeLast()
    }

    package mutating func key(_ name: String) {
        separate()
        JSON.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    package mutating func string(_ value: String?) {
        separate()
        if let value { JSON.writeString(value, to: &bytes) } else { bytes.append(contentsOf: "null".utf8) }
    }

    package mutating func int(_ value: Int64?) {
        separate()
        if let value { bytes.append(contentsOf: String(value).utf8) } else { bytes.append(contentsOf: "null".utf8) }
    }

    package mutating func int(_ value: Int) { int(Int64(value)) }

    package mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    package mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    package mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    /// `"name": value` pairs, the common case.
    package mutating func field(_ name: String, _ value: String?) { key(name); string(value) }
    package mutating func field(_ name: String, _ value: Int64?) { key(name); int(value) }
    package mutating func field(_ name: String, _ value: Int) { key(name); int(Int64(value)) }
    package mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }
}

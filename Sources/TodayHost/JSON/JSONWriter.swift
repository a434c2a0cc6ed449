extension JSON {
    /// Compact JSON text, object members in their stored order.
    package func serialized() -> String {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    package func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case let .bool(value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case let .int(value): output.append(contentsOf: String(value).utf8)
        case let .double(value): JSON.writeDouble(value, to: &output)
        case let .string(value): JSON.writeString(value, to: &output)
        case let .array(elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case let .object(members):
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSON.writeString(member.0, to: &output)
                output.append(UInt8(ascii: ":"))
                member.1.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Integral doubles print without a fraction, as JavaScript prints them.
    static func writeDouble(_ value: Double, to output: inout [UInt8]) {
        guard value.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if value.rounded() == value, abs(value) < 1e15 {
            output.append(contentsOf: String(Int64(value)).utf8)
        } else {
            output.append(contentsOf: "\(value)".utf8)
        }
    }

    static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings need no escaping: copy them whole.
        var value = value
        let copied = value.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            output.append(contentsOf: utf8)
            return true
        }
        if copied {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: "\\u00".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

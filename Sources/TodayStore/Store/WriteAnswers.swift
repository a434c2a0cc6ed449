import TodayHost

/// The `200` answer to an accepted write, made from what it committed (API: Input responses):
/// by the store inside the transaction for an `Idempotency-Key` (which stores it), and by the
/// server after commit otherwise, with this one encoder, so both are the same bytes.
package enum WriteAnswer: Sendable, Equatable {
    /// One input's: `{"outcome", "reason", "resolution", "entries", "session"}`.
    case input
    /// A `/steps` batch's: `{"results": [input answer…], "session": view}`.
    case steps

    /// The answer to `writes`, with `warnings` (the request's unknown fields) as its first member.
    package func bytes(of writes: [SessionStore.Write], warnings: [FieldWarning]) -> [UInt8] {
        let answer: [UInt8]
        switch self {
        case .input: answer = Self.input(writes[0], view: writes[0].viewBytes)
        case .steps: answer = Self.steps(writes)
        }
        return Self.adding(warnings, to: answer)
    }

    /// One input's answer: the entries and the view spliced in as already encoded.
    package static func input(_ write: SessionStore.Write, view: [UInt8]) -> [UInt8] {
        let outcome = write.applied.outcome
        var bytes: [UInt8] = []
        bytes.reserveCapacity(view.count + write.entries.reduce(256) { $0 + $1.count + 1 })
        bytes += Array(#"{"outcome":"#.utf8)
        JSON.string(outcome.name).write(to: &bytes)
        bytes += Array(#","reason":"#.utf8)
        JSON.string(outcome.reason).write(to: &bytes)
        bytes += Array(#","resolution":"#.utf8)
        write.applied.resolution.write(to: &bytes)
        bytes += Array(#","entries":["#.utf8)
        for (index, entry) in write.entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry
        }
        bytes += Array(#"],"session":"#.utf8)
        bytes += view
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// A batch's answer: each step's answer with the view as it stood after that step, and the
    /// last view again as `session`.
    static func steps(_ writes: [SessionStore.Write]) -> [UInt8] {
        var bytes = Array(#"{"results":["#.utf8)
        var lastView: [UInt8] = []
        for (index, write) in writes.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            lastView = index == writes.count - 1 ? write.viewBytes : write.stored.viewBytes
            bytes += input(write, view: lastView)
        }
        bytes += Array(#"],"session":"#.utf8)
        bytes += lastView
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `bytes` (a JSON object) with `"warnings":[…]` as its first member (nothing when there are
    /// none).
    package static func adding(_ warnings: [FieldWarning], to bytes: [UInt8]) -> [UInt8] {
        guard !warnings.isEmpty, bytes.first == UInt8(ascii: "{") else { return bytes }
        var out = Array(#"{"warnings":"#.utf8)
        JSON.array(warnings.map(\.json)).write(to: &out)
        if bytes.count > 2 { out.append(UInt8(ascii: ",")) }
        out += bytes.dropFirst()
        return out
    }
}

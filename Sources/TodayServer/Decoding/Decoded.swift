import TodayHost

extension APIError {
    /// The core's refusal of a body, as the HTTP edge answers it.
    init(_ problem: InputProblem) {
        self.init(code: problem.code.rawValue, status: 400, detail: problem.detail, field: problem.field)
    }
}

/// The core's decoders (`InputDecoding`) with their refusals answered as `APIError`s. A body is
/// parsed once (`body`); its input and its unknown fields are both read from that value.
enum Decoded {
    /// A request's body as a JSON object, or `invalid_json`.
    static func body(_ bytes: [UInt8]) throws(APIError) -> BodyFields {
        do throws(InputProblem) { return try BodyFields.object(from: bytes) } catch { throw APIError(error) }
    }

    static func http<T>(_ decode: @escaping @Sendable (BodyFields) throws(InputProblem) -> T) -> @Sendable (BodyFields) throws(APIError) -> T {
        { body throws(APIError) in
            do throws(InputProblem) { return try decode(body) } catch { throw APIError(error) }
        }
    }
}

import TodayHost

extension APIError {
    /// The core's refusal of a body, as the HTTP edge answers it.
    init(_ problem: InputProblem) {
        self.init(code: problem.code.rawValue, status: 400, detail: problem.detail, field: problem.field)
    }
}

/// The core's decoders (`InputDecoding`) with their refusals answered as `APIError`s.
enum Decoded {
    static func http<T>(_ decode: @escaping @Sendable ([UInt8]) throws(InputProblem) -> T) -> @Sendable ([UInt8]) throws(APIError) -> T {
        { body throws(APIError) in
            do throws(InputProblem) { return try decode(body) } catch { throw APIError(error) }
        }
    }
}

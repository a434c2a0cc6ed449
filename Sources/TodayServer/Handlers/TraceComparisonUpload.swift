import TodayHost

/// `POST /v1/host-traces/compare` (docs/TRACES.md, "iOS against Android"): two recordings of one
/// scenario compared. The body is JSON, `{"a": trace, "b": trace, "toleranceMs"?}` where a trace
/// is its NDJSON text or the array of its lines, or `multipart/form-data` with the parts `a` and
/// `b` (and `toleranceMs`). A comparison aligns one trace with the other, so both are held: the
/// body is read on a judge (as a verified trace is) up to `limit`, then compared there.
final class TraceComparisonUpload: BodySink, @unchecked Sendable {
    enum Form {
        case json
        case multipart(boundary: String)
    }

    let limit: Int
    private let form: Form
    private let queryTolerance: Millis?
    private let junit: Bool
    private let extraHeaders: [(String, String)]
    private var body: [UInt8] = []

    init(form: Form, queryTolerance: Millis?, junit: Bool, limit: Int, extraHeaders: [(String, String)]) {
        self.form = form
        self.queryTolerance = queryTolerance
        self.junit = junit
        self.limit = limit
        self.extraHeaders = extraHeaders
    }

    func take(_ bytes: UnsafeBufferPointer<UInt8>) {
        body.append(contentsOf: bytes)
    }

    func finish() -> HTTPResponse {
        var response: HTTPResponse
        do throws(APIError) {
            let (a, b, tolerance) = try traces()
            var recordings: [TraceRecording] = []
            for (side, trace) in [(HostTraceComparison.Side.a, a), (.b, b)] {
                do throws(TraceProblem) {
                    recordings.append(try trace.recording(toleranceMs: tolerance))
                } catch {
                    throw APIError.tracePair(.invalidTrace(side, error))
                }
            }
            let comparison: HostTraceComparison
            do throws(TracePairProblem) {
                comparison = try HostTraceComparison.compare(recordings[0], recordings[1], toleranceMs: tolerance)
            } catch {
                throw APIError.tracePair(error)
            }
            response = junit ? .junit(comparison.junit) : .json(comparison.json)
        } catch {
            response = error.response
        }
        response.headers += extraHeaders
        return response
    }

    func abandon() {
        body = []
    }

    // MARK: The body

    /// One side's trace as the body gave it.
    enum Trace {
        case lines(TraceLines.Format, ArraySlice<UInt8>)
        /// The elements of a JSON array: element N−1 is line N.
        case elements([JSON])

        func recording(toleranceMs: Millis?) throws(TraceProblem) -> TraceRecording {
            var reader = TraceRecording.Reader(toleranceMs: toleranceMs)
            switch self {
            case let .lines(format, bytes):
                var lines = TraceLines(format)
                try lines.feed(bytes) { line throws(TraceProblem) in try reader.feed(line: line) }
                try lines.finish { line throws(TraceProblem) in try reader.feed(line: line) }
            case let .elements(elements):
                for element in elements {
                    var bytes: [UInt8] = []
                    element.write(to: &bytes)
                    try reader.feed(line: bytes)
                }
            }
            return try reader.finish()
        }
    }

    static let fields = ["a", "b", "toleranceMs"]

    /// A and B, and the tolerance the body or the query gives (not both, unless equal).
    private func traces() throws(APIError) -> (Trace, Trace, Millis?) {
        var found: [String: Trace] = [:]
        var bodyTolerance: Millis?
        switch form {
        case .json:
            let value: JSON
            do { value = try JSON.parse(bytes: body) } catch { throw .invalidJSON("the body is not JSON: \(error)") }
            guard case let .object(members) = value else {
                throw .invalidJSON("the body is a JSON object {\"a\": trace, \"b\": trace, \"toleranceMs\"?}, got \(value.typeName)")
            }
            for (name, member) in members {
                switch name {
                case "a", "b":
                    switch member {
                    case let .string(text): found[name] = .lines(.ndjson, Array(text.utf8)[...])
                    case let .array(elements): found[name] = .elements(elements)
                    default: throw .invalidField(name, "must be a trace: its NDJSON text, or the array of its lines")
                    }
                case "toleranceMs":
                    guard !member.isNull else { continue }
                    bodyTolerance = try Self.tolerance(member.int64Value, given: member.serialized())
                default:
                    throw Self.unknown(name)
                }
            }
        case let .multipart(boundary):
            for part in try MultipartForm(body, boundary: boundary).parts {
                switch part.name {
                case "a", "b":
                    let isJSON = part.contentType.map { $0 == "application/json" || $0.hasSuffix("+json") } ?? false
                    found[part.name] = .lines(isJSON ? .jsonArray : .ndjson, part.body)
                case "toleranceMs":
                    let text = String(decoding: part.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    bodyTolerance = try Self.tolerance(Millis(text), given: text)
                default:
                    throw Self.unknown(part.name)
                }
            }
        }
        guard let a = found["a"], let b = found["b"] else {
            throw .invalidField(found["a"] == nil ? "a" : "b", "required: the two traces to compare are a and b")
        }
        if let bodyTolerance, let queryTolerance, bodyTolerance != queryTolerance {
            throw .invalidField("toleranceMs", "given twice: \(queryTolerance) in the query and \(bodyTolerance) in the body")
        }
        return (a, b, bodyTolerance ?? queryTolerance)
    }

    static func tolerance(_ value: Millis?, given: String) throws(APIError) -> Millis {
        guard let value, (0...TraceHeader.largestToleranceMs).contains(value) else {
            throw .invalidField("toleranceMs", "must be an integer from 0 to \(TraceHeader.largestToleranceMs), got \(given)")
        }
        return value
    }

    private static func unknown(_ name: String) -> APIError {
        let hint = Suggestion.nearest(to: name, among: fields).map { "; did you mean \($0)?" } ?? ""
        return .invalidField(name, "unknown field (a comparison takes a, b and toleranceMs)\(hint)")
    }
}

/// The route `POST /v1/host-traces/compare`: what the head says (token, query, `Content-Type`)
/// is answered before the body is read, and the body is read and compared on a judge.
struct TraceComparisonHandlers: StreamedRoute {
    static let path = "/v1/host-traces/compare"
    let access: Access?
    let crossOrigin: CrossOrigin
    /// The most both traces' body may hold (`TodayService.comparisonLimit`; tests set less).
    let limit: Int

    func upload(_ request: HTTPRequest, extraHeaders: [(String, String)]) throws(APIError) -> any BodySink {
        let contentType = request.header("Content-Type")
        let form: TraceComparisonUpload.Form
        if let contentType, BodyMediaType.mediaType(contentType) == "multipart/form-data" {
            guard let boundary = MultipartForm.boundary(of: contentType) else {
                throw .unsupportedMediaType("a multipart/form-data body needs its boundary parameter")
            }
            form = .multipart(boundary: boundary)
        } else if let contentType, BodyMediaType.refusal(contentType: contentType) != nil {
            if let charset = BodyMediaType.charsetRefusal(contentType) { throw charset }
            throw .unsupportedMediaType("two traces to compare are JSON ({\"a\", \"b\"}: application/json) or multipart/form-data "
                + "(parts a and b); got Content-Type \(BodyMediaType.mediaType(contentType))")
        } else {
            form = .json
        }
        var tolerance: Millis?
        if let text = request.query("toleranceMs") { tolerance = try TraceComparisonUpload.tolerance(Millis(text), given: text) }
        let junit = try QueryParameters(request: request).oneOf("format", ["json", "junit"]) == "junit"
        return TraceComparisonUpload(form: form, queryTolerance: tolerance, junit: junit, limit: limit, extraHeaders: extraHeaders)
    }
}

import TodayHost
/// Query parameters with the contract's ranges (API: Paging).
struct QueryParameters {
    let request: HTTPRequest

    /// `limit`: default 100 (or `fallback`), 1–1000.
    func limit(default fallback: Int = 100) throws(APIError) -> Int {
        guard let text = request.query("limit") else { return fallback }
        guard let value = Int(text), (1...1000).contains(value) else {
            throw .invalidField("limit", "must be an integer from 1 to 1000")
        }
        return value
    }

    /// A timeline cursor: the `seq` to start after.
    func afterSeq() throws(APIError) -> Int {
        try afterCursor("must be an integer from 0 to \(BodyFields.largestInteger) (a seq)") ?? 0
    }

    /// `waitMs`: how long a timeline request may wait for a new entry (0–`longest`, default 0).
    func waitMs(longest: Int = SessionHandlers.longestWaitMs) throws(APIError) -> Int {
        guard let text = request.query("waitMs") else { return 0 }
        guard let value = Int(text), (0...longest).contains(value) else {
            throw .invalidField("waitMs", "must be an integer from 0 to \(longest)")
        }
        return value
    }

    /// A session list cursor, as `next` gave it.
    func listCursor() throws(APIError) -> String? {
        try afterCursor("must be a cursor returned as next").map(String.init)
    }

    /// `after` as 0…`BodyFields.largestInteger`; absent or empty is `nil` (from the start).
    private func afterCursor(_ problem: String) throws(APIError) -> Int? {
        try Self.cursor(request.query("after"), field: "after", problem: problem)
    }

    /// A cursor (a query parameter or `Last-Event-ID`) as 0…`BodyFields.largestInteger`;
    /// absent or empty is `nil`.
    static func cursor(_ text: String?, field: String, problem: String) throws(APIError) -> Int? {
        guard let text, !text.isEmpty else { return nil }
        guard let value = Int(text), (0...Int(BodyFields.largestInteger)).contains(value) else {
            throw .invalidField(field, problem)
        }
        return value
    }

    /// A filter on an identifier (`uid`, `label`): what creation accepts, so a filter never
    /// names a value no session can hold.
    func identifier(_ name: String) throws(APIError) -> String? {
        guard let text = request.query(name) else { return nil }
        guard !text.isEmpty else { throw .invalidField(name, "must not be empty") }
        if let problem = FieldLimits.identifierProblem(text) { throw .invalidField(name, problem) }
        return text
    }

    func oneOf(_ name: String, _ allowed: [String]) throws(APIError) -> String? {
        guard let text = request.query(name) else { return nil }
        guard allowed.contains(text) else {
            throw .invalidField(name, "must be one of \(allowed.joined(separator: ", "))")
        }
        return text
    }
}

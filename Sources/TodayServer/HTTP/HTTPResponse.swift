import TodayHost

/// What a handler answers.
public struct HTTPResponse {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static let jsonContentType = "application/json; charset=utf-8"

    public static func json(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        var bytes: [UInt8] = []
        value.write(to: &bytes)
        return HTTPResponse(status: status, headers: [("Content-Type", jsonContentType)] + headers, body: bytes)
    }

    /// A JSON body assembled from pieces already encoded (stored timeline entries).
    public static func jsonBytes(_ bytes: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", jsonContentType)], body: bytes)
    }
}

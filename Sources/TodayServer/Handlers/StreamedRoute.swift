/// A route whose body is read on a judge as it arrives instead of whole (`POST /v1/host-traces`,
/// `POST /v1/host-traces/compare`): what a request's head says (token, query, `Content-Type`) is
/// answered before its body is read.
protocol StreamedRoute: Sendable {
    static var path: String { get }
    var access: Access? { get }
    var crossOrigin: CrossOrigin { get }
    /// The sink for a request whose head is accepted; else the refusal.
    func upload(_ request: HTTPRequest, extraHeaders: [(String, String)]) throws(APIError) -> any BodySink
}

extension StreamedRoute {
    /// `.streamed` for this route, `.whole` for every other.
    func bodyHandling(_ request: HTTPRequest) -> BodyHandling {
        guard request.method == "POST", request.path == Self.path else { return .whole }
        let cors = crossOrigin.headers(for: request.header("Origin"))
        do throws(APIError) {
            return .streamed(try upload(try Access.scoped(request, by: access).get(), extraHeaders: cors), routeName: Self.path)
        } catch {
            return .refused(error.response.adding(cors), routeName: Self.path)
        }
    }

    /// The route's handler for a body already read whole (the service called without the HTTP
    /// server's streaming): the same sink, given the body at once.
    func answerWhole(_ request: HTTPRequest, _: PathParameters) throws(APIError) -> HTTPResponse {
        let upload = try upload(request, extraHeaders: [])
        request.body.withUnsafeBufferPointer { upload.take($0) }
        return upload.finish()
    }
}

/// A request body read as it arrives instead of whole (`POST /v1/host-traces`, up to 256 MiB;
/// every other body is read into memory, at most 1 MiB). Called on the connection's worker
/// thread, one call at a time, in order: `take` for each piece, then `finish` once, or
/// `abandon` if the request ends without one (the client left, the server stopped).
package protocol BodySink: AnyObject {
    /// The most bytes the body may hold: past it the answer is `413`.
    var limit: Int { get }
    func take(_ bytes: UnsafeBufferPointer<UInt8>)
    /// The answer, after the last byte.
    func finish() -> HTTPResponse
    func abandon()
}

/// How the server reads a request's body, decided from its head (method, path, headers, query).
package enum BodyHandling {
    /// Into memory, then `respond` (every route but the streamed ones).
    case whole
    /// Refused before the body is read (the answer closes the connection).
    case refused(HTTPResponse, routeName: String)
    /// Handed to `sink` as it arrives.
    case streamed(any BodySink, routeName: String)
}

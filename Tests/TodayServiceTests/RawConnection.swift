import Foundation
import TodayHost
import TodayTestSupport

/// One TCP connection to the test server that sends exactly the bytes a test gives it — for
/// what an HTTP client library would refuse or repair (duplicate or conflicting framing
/// headers, a bare CR, a second request hidden in a body) and for watching a connection being
/// kept or closed.
/// Reads wait on a thread of their own (`offThePool`), never on the cooperative pool; one task
/// uses a connection at a time.
final class RawConnection: @unchecked Sendable {
    struct Answer: CustomStringConvertible, Sendable {
        var status: Int
        /// Lowercased names.
        var headers: [String: String]
        var body: [UInt8]

        var json: JSON { (try? JSON.parse(bytes: body)) ?? .null }
        var closes: Bool { headers["connection"]?.lowercased() == "close" }
        var description: String { "\(status) \(headers) \(String(decoding: body, as: UTF8.self))" }
    }

    private let socket: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED)
            close(socket)
            throw error
        }
    }

    deinit { close(socket) }

    /// Ends the connection from this side, as a client that went away does.
    func hangUp() { shutdown(socket, Int32(SHUT_RDWR)) }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Whether the kernel would take more bytes at once: `false` when the send buffer is full
    /// (the server reads nothing, and its own buffer is full too).
    var canSendNow: Bool {
        var watch = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        return poll(&watch, 1, 0) > 0
    }

    func send(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return }  // the server closed: what it answered is still readable
            sent += count
        }
    }

    /// The next answer on this connection, or `nil` when the connection ends (or nothing
    /// complete arrives) within `timeout`. `toHead`: the answer to a HEAD, which ends with its
    /// headers whatever its `Content-Length` says. The default deadline only tells "answered" from
    /// "never": no healthy answer comes near 60 s, even under a sanitizer beside a CPU hog.
    func readAnswer(timeout: TimeInterval = 60, toHead: Bool = false) async -> Answer? {
        await offThePool { self.waitForAnswer(timeout: timeout, toHead: toHead) }
    }

    /// Whether the server closes the connection within `timeout` (after any answers it sends,
    /// which are dropped).
    func closedByServer(timeout: TimeInterval = 60) async -> Bool {
        await offThePool { self.waitForClose(timeout: timeout) }
    }

    private func waitForAnswer(timeout: TimeInterval, toHead: Bool) -> Answer? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let answer = takeAnswer(toHead: toHead) { return answer }
            guard receive(until: deadline) == .data else { return nil }
        }
    }

    /// Whether the server closed the connection by `timeout`: judged by what the socket says,
    /// not by the time. (It was `Date() < deadline` after the last read, so a thread that began
    /// after a short deadline had passed said "not closed" without looking: under the thread
    /// sanitizer on a loaded runner both trickle tests gave up after 300 s of such looks.)
    private func waitForClose(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            switch receive(until: deadline) {
            case .data: buffer.removeAll()
            case .closed: return true
            case .timedOut: return false
            }
        }
    }

    private enum Received { case data, closed, timedOut }

    /// Reads what is there, waiting until `deadline` at most; it looks at least once, even when
    /// the deadline has passed before this thread ran.
    private func receive(until deadline: Date) -> Received {
        let left = deadline.timeIntervalSinceNow
        var watch = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&watch, 1, left > 0 ? Int32(min(left, 60) * 1000) + 1 : 0) > 0 else { return .timedOut }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return .closed }
        buffer += chunk[..<count]
        return .data
    }

    /// One complete answer from the front of the buffer (bodies with a Content-Length only).
    private func takeAnswer(toHead: Bool) -> Answer? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = buffer.indices.dropLast(3).first(where: { Array(buffer[$0..<$0 + 4]) == separator }) else { return nil }
        let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let bodyStart = end + 4
        let length = toHead ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        guard toHead || headers["transfer-encoding"] == nil, buffer.count >= bodyStart + length else { return nil }
        let body = Array(buffer[bodyStart..<bodyStart + length])
        buffer.removeFirst(bodyStart + length)
        return Answer(status: status, headers: headers, body: body)
    }
}

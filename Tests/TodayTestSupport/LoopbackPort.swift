import Glibc

/// A loopback TCP port nothing listens on (the kernel's pick for a socket closed at once): a
/// connection to it is refused, as to a database that is down.
package func unusedLoopbackPort() -> Int {
    // Bound while picked, closed when `picked` is released at the return.
    guard let picked = RefusingLoopbackPort() else { preconditionFailure("bind() to 127.0.0.1:0 failed: errno \(errno)") }
    return picked.port
}

/// A loopback TCP port that refuses every connection for as long as this value lives: bound,
/// never listening, so no other server of a parallel test can take it meanwhile (as one may
/// take an `unusedLoopbackPort()` between its pick and its use).
package final class RefusingLoopbackPort: @unchecked Sendable {
    package let port: Int
    private let descriptor: Int32

    package init?() {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

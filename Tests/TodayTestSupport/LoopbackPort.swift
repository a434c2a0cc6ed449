import Glibc

/// A loopback TCP port nothing listens on (the kernel's pick for a socket closed at once): a
/// connection to it is refused, as to a database that is down.
public func unusedLoopbackPort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(descriptor >= 0, "socket() failed: errno \(errno)")
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
        }
    }
    precondition(bound, "bind() to 127.0.0.1:0 failed: errno \(errno)")
    return Int(UInt16(bigEndian: address.sin_port))
}

#if canImport(Glibc)
import Glibc
#endif

/// A filesystem Unix-socket address; paths of 108 bytes or more are refused.
struct UnixSocketAddress {
    private var address = sockaddr_un()

    init(path: String) throws(ControlError) {
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw ControlError("socket path \(path) is \(bytes.count) bytes; the limit is 107")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
    }

    /// Calls `body` with the address as a `sockaddr` and its length (for bind and connect).
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    }
}

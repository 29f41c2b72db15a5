import Foundation

/// A raw Unix-socket client, for feeding a control socket what a well-behaved client would not.
public final class UnixClient {
    public let fd: Int32

    /// Connects to `path`; nil when nothing listens (or the connection is refused).
    public init?(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if ok != 0 { close(fd); return nil }
    }

    deinit { close(fd) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Closes the writing half (the daemon sees end of input).
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until a newline, end of input or `timeout` seconds.
    public func readLine(timeout: Double) -> String? {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !out.contains(0x0A) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            out += buffer[..<n]
        }
        return out.isEmpty ? nil : String(decoding: out.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The client side of the control protocol: one request line out, one reply line back.
public enum ControlClient {
    /// Sends `line` to the daemon at `path` and returns its reply line; throws when nothing listens or no reply comes in `timeout` seconds.
    public static func exchange(_ line: String, path: String, timeout: Double) throws(ControlError) -> String {
        let address = try UnixSocketAddress(path: path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlError(String(cString: strerror(errno))) }
        defer { close(fd) }
        guard address.withSockaddr({ connect(fd, $0, $1) }) == 0 else {
            throw ControlError("cannot connect (\(String(cString: strerror(errno)))); is steward run up, and may you use its socket?")
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let request = Array((line + "\n").utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw ControlError("could not send the request: \(String(cString: strerror(errno)))")
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !reply.contains(0x0A) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { break }
            if n < 0 { throw ControlError("no reply: \(String(cString: strerror(errno)))") }
            reply += buffer[..<n]
        }
        return String(decoding: reply.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The client side of the control protocol: one request line out, one reply line back.
public enum ControlClient {
    /// Sends `line` to the daemon at `path` and returns its reply line. Throws when nothing listens, when the
    /// process listening is not one `ctl` trusts (see `ServerTrust`), when the connection closes before a whole
    /// reply line, or when none comes within `timeout` seconds (finite, more than 0).
    public static func exchange(_ line: String, path: String, timeout: Double) throws(ControlClientError) -> String {
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch { throw ControlClientError(.unreachable, error.message) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlClientError(.unreachable, String(cString: strerror(errno))) }
        defer { close(fd) }
        guard address.withSockaddr({ connect(fd, $0, $1) }) == 0 else {
            throw ControlClientError(.unreachable, "cannot connect (\(String(cString: strerror(errno)))); is steward run up, and may you use its socket?")
        }
        try ServerTrust.check(fd, path: path)
        let seconds = timeout.isFinite ? min(max(timeout, 0.001), 1e7) : 600
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let request = Array((line + "\n").utf8)
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE || errno == ECONNRESET { throw closedEarly }
                throw ControlClientError(.unreachable, "could not send the request: \(String(cString: strerror(errno)))")
            }
            sent += n
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !reply.contains(0x0A) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { throw closedEarly }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw ControlClientError(.timedOut, "no answer within \(timeout) s (--timeout); the daemon may still be working on the request (a run goes on)")
                }
                if errno == ECONNRESET { throw closedEarly }
                throw ControlClientError(.closed, "no reply: \(String(cString: strerror(errno)))")
            }
            reply += buffer[..<n]
        }
        return String(decoding: reply.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    private static var closedEarly: ControlClientError {
        ControlClientError(.closed, "the daemon closed the connection before answering: it may be shutting down, or it refused the request (too many connections, or a request it could not read)")
    }
}

import Foundation

/// A real `NOTIFY_SOCKET`: a datagram socket the daemon under test reports to, as systemd's would be.
public final class NotifyListener: @unchecked Sendable {
    public let path: String
    private let fd: Int32
    private var received: [String] = []

    public init() throws {
        path = NSTemporaryDirectory() + "steward-notify-\(UInt32.random(in: 0...UInt32.max)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw CocoaError(.fileWriteUnknown) }
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every message so far (each datagram one string of `KEY=VALUE` lines).
    public func messages() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received.append(String(decoding: buffer[..<n], as: UTF8.self))
        }
        return received
    }

    /// Waits up to `timeout` seconds for a message containing `text`.
    public func wait(for text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if messages().contains(where: { $0.contains(text) }) { return true }
        }
        return false
    }
}

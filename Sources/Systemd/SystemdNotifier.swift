#if canImport(Glibc)
import Glibc
#endif
import BlockingExecutor
import FoundationEssentials

/// Talks to systemd's notify socket (`$NOTIFY_SOCKET`): READY, STATUS, WATCHDOG, RELOADING, STOPPING.
/// Without the variable (not under systemd) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket path; a leading `@` names the abstract namespace.
    public let socketPath: String?
    /// Half the watchdog timeout, when `WatchdogSec=` is set for this process.
    public let watchdogPingInterval: Double?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let usec = environment["WATCHDOG_USEC"].flatMap(Double.init), usec > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true {
            watchdogPingInterval = usec / 2 / 1_000_000
        } else {
            watchdogPingInterval = nil
        }
    }

    /// `READY=1` plus a status line.
    public func ready(status: String) { send(["READY=1", "STATUS=\(status)"]) }
    public func status(_ text: String) { send(["STATUS=\(text)"]) }
    public func watchdog() { send(["WATCHDOG=1"]) }
    /// `RELOADING=1` with `MONOTONIC_USEC`, as systemd wants before a reload.
    public func reloading() {
        send(["RELOADING=1", "MONOTONIC_USEC=\(MonotonicClock.microseconds())", "STATUS=reloading the configuration"])
    }
    public func stopping() { send(["STOPPING=1", "STATUS=stopping"]) }

    /// Sends `lines` as one datagram; errors are ignored (systemd may be gone during shutdown).
    public func send(_ lines: [String]) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.enumerated() { raw[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let message = Array((lines.joined(separator: "\n") + "\n").utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
    }
}

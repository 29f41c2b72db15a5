#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a Unix socket (`SO_PEERCRED`, as of `connect()`).
public struct PeerCredentials: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// Root and Steward's own user may change things; everyone else who can reach the socket may only look.
    public var mayChange: Bool { uid == 0 || uid == geteuid() }

    /// The kernel's `struct ucred`, which Glibc's Swift overlay hides.
    private struct UCred { var pid: Int32 = 0; var uid: UInt32 = 0; var gid: UInt32 = 0 }

    static func of(_ fd: Int32) -> PeerCredentials? {
        var cred = UCred()
        var length = socklen_t(MemoryLayout<UCred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 else { return nil }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
    }
}

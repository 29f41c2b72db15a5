#if canImport(Glibc)
import Glibc
#endif
import FileSystem
import FoundationEssentials
import StewardLog
import Synchronization

/// The operators' Unix socket: one request line in, one reply line out, then the connection closes.
/// Reading, writing and limits live on one event-loop thread (poll); requests are answered by async handlers.
public final class ControlServer: Sendable {
    /// Bounds on what a client can make the daemon hold.
    public struct Limits: Sendable {
        public var maxLineBytes = 4096
        public var readTimeoutSeconds = 5.0
        public var writeTimeoutSeconds = 5.0
        /// Connections held at once, all users together.
        public var maxClients = 128
        /// Of those, kept for root and Steward's own user: others together never hold more than the rest.
        public var reservedForPrivileged = 16
        /// Connections one user other than root or Steward's own may hold at once.
        public var maxClientsPerUser = 16
        /// Requests of other users handled at once; the rest wait their turn. Root's and Steward's user's
        /// requests never wait behind them.
        public var maxConcurrentUnprivileged = 4
        public init() {}
    }

    public let path: String
    let limits: Limits
    let logger: Logger
    /// The socket file as bound, so shutdown removes only that one.
    private let boundSocket = Mutex<FileStatus?>(nil)

    public init(path: String, limits: Limits = Limits(), logger: Logger) {
        self.path = path
        self.limits = limits
        self.logger = logger
    }

    /// A bound, listening socket, ready to serve.
    public struct Listener: Sendable { let fd: Int32 }

    /// Binds the socket (mode 0660); throws when it cannot, when another daemon already listens on it, when its
    /// folder (or one above) could be changed by someone other than root or Steward's user, or when something
    /// other than a stale socket is at the path (only a socket nobody answers on is removed).
    public func listen() throws -> Listener { Listener(fd: try bind()) }

    /// Serves until the calling task is cancelled, then closes every connection and unlinks the socket.
    /// `immediate` runs on the socket's own thread for every request line and must never block: a reply it gives is
    /// sent at once, without a task (and without waiting behind other users' requests); when it gives nil,
    /// `handler` answers.
    public func serve(_ listener: Listener, immediate: @escaping @Sendable (String, PeerCredentials) -> String? = { _, _ in nil },
                      handler: @escaping @Sendable (String, PeerCredentials) async -> String) async {
        let (requests, continuation) = AsyncStream<EventLoop.Request>.makeStream()
        guard let loop = try? EventLoop(listener: listener.fd, limits: limits, requests: continuation, immediate: immediate,
                                        logger: logger) else {
            logger.error("control socket cannot start", [("path", path)])
            return
        }
        defer {
            loop.stop()
            unlinkOwnSocket()
        }
        guard loop.start() else { return }
        logger.info("control socket listening", [("path", path)])
        await withTaskCancellationHandler {
            // Discarding: a plain task group keeps every finished child until it is awaited, and this one is never
            // awaited, so each request answered by a task would stay in memory for the daemon's life.
            await withDiscardingTaskGroup { group in
                for await request in requests {
                    group.addTask {
                        let reply = await handler(request.line, request.peer)
                        loop.reply(to: request.client, reply)
                    }
                }
            }
        } onCancel: {
            loop.stop()
        }
    }

    private func bind() throws -> Int32 {
        let address = try UnixSocketAddress(path: path)
        let folder = FolderTrust.split(path).folder
        do { try FolderTrust.check(folder: folder) }
        catch { throw ControlError("refusing to put the control socket in \(folder): \(error)") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ControlError("cannot create the control socket: \(String(cString: strerror(errno)))") }
        do {
            try removeStaleSocket(address)
        } catch {
            close(fd)
            throw error
        }
        let oldMask = umask(0o117)
        let bound = address.withSockaddr { Glibc.bind(fd, $0, $1) }
        umask(oldMask)
        guard bound == 0, Glibc.listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ControlError("cannot listen on \(path): \(reason)")
        }
        boundSocket.withLock { $0 = try? FileStatus.of(path) }
        return fd
    }

    /// Removes what is at the socket path only when it is a socket nobody answers on (left by a daemon that died);
    /// anything else there is refused.
    private func removeStaleSocket(_ address: UnixSocketAddress) throws(ControlError) {
        let existing: FileStatus?
        do { existing = try FileStatus.of(path) } catch { throw ControlError("\(error)") }
        guard let existing else { return }
        guard existing.kind == .socket else {
            throw ControlError("\(path) exists and is \(existing.kindDescription), not a socket; Steward removes only a socket a stopped daemon left: move it away or choose another [control] socket")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let taken = probe >= 0 && address.withSockaddr { connect(probe, $0, $1) } == 0
        if probe >= 0 { close(probe) }
        if taken {
            throw ControlError("another process is listening on \(path); is a second steward running with the same [control] socket?")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ControlError("cannot remove the stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Unlinks the socket at shutdown only if it is still the one this server bound.
    private func unlinkOwnSocket() {
        guard let mine = boundSocket.withLock({ $0 }), let now = try? FileStatus.of(path),
              now.kind == .socket, now.device == mine.device, now.inode == mine.inode else { return }
        unlink(path)
    }
}

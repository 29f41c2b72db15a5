#if canImport(Glibc)
import Glibc
#endif
import BlockingExecutor
internal import CSystem
import FoundationEssentials
import StewardLog
import Synchronization
import StewardJSON

/// The poll loop behind `ControlServer`: accepts, reads one line per client within the limits, answers it at once
/// when `immediate` can, else hands it on, and writes the reply back when it comes.
final class EventLoop: @unchecked Sendable {
    struct Request: Sendable {
        let client: Int
        let line: String
        let peer: PeerCredentials
    }

    private struct Client {
        let fd: Int32
        let peer: PeerCredentials
        /// Root or Steward's own user: its requests skip the queue of other users' requests.
        let privileged: Bool
        var input: [UInt8] = []
        var output: [UInt8] = []
        var phase: ClientPhase
    }

    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let limits: ControlServer.Limits
    private let requests: AsyncStream<Request>.Continuation
    /// Runs on the loop's thread for every request line: the reply when it needs no waiting, else nil.
    private let immediate: @Sendable (String, PeerCredentials) -> String?
    private let logger: Logger
    private let shared = Mutex<(replies: [(Int, String)], stopped: Bool)>(([], false))
    /// The loop's thread, joined by `stop()`.
    private let thread = Mutex<pthread_t?>(nil)
    /// Only touched on the loop's thread.
    private var clients: [Int: Client] = [:]
    private var nextID = 0
    /// Other users' requests being handled (by client id, until their reply comes, even if the client left).
    private var unprivilegedRunning: Set<Int> = []
    /// Other users' requests waiting for one of those to finish, oldest first.
    private var unprivilegedWaiting: [Request] = []
    /// Connections refused since the last warning about them, by uid; logged at most every 10 s.
    private var refusedByUID: [UInt32: Int] = [:]
    private var lastRefusalWarning = 0.0

    init(listener: Int32, limits: ControlServer.Limits, requests: AsyncStream<Request>.Continuation,
         immediate: @escaping @Sendable (String, PeerCredentials) -> String?, logger: Logger) throws {
        var fds: [Int32] = [0, 0]
        guard steward_pipe2(&fds, O_NONBLOCK | O_CLOEXEC) == 0 else { throw ControlError("cannot create a pipe: \(String(cString: strerror(errno)))") }
        self.listener = listener
        self.wake = (fds[0], fds[1])
        self.limits = limits
        self.requests = requests
        self.immediate = immediate
        self.logger = logger
    }

    /// Starts the loop's thread; false when no thread could be made (nothing will answer).
    func start() -> Bool {
        let box = Unmanaged.passRetained(self).toOpaque()
        var id = pthread_t()
        let created = pthread_create(&id, nil, { argument in
            let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
            loop.loop()
            return nil
        }, box)
        if created == 0 {
            thread.withLock { $0 = id }
            return true
        }
        Unmanaged<EventLoop>.fromOpaque(box).release()
        logger.critical("could not start the control socket's thread: the socket does not answer", [("error", String(cString: strerror(created)))])
        return false
    }

    /// Stops the loop, closes every connection, waits for the thread. Safe to call twice.
    func stop() {
        let first = shared.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        poke()
        // The loop's thread closes the listener as it ends; one that never started leaves it to this.
        if let id = thread.withLock({ $0 }) { pthread_join(id, nil) } else { close(listener) }
        close(wake.read)
        close(wake.write)
    }

    func reply(to client: Int, _ text: String) {
        shared.withLock { $0.replies.append((client, text)) }
        poke()
    }

    private func poke() { var byte: UInt8 = 1; _ = write(wake.write, &byte, 1) }

    private func loop() {
        defer {
            for client in clients.values { close(client.fd) }
            clients = [:]
            close(listener)
            requests.finish()
        }
        while true {
            let (replies, stopped) = shared.withLock { state -> ([(Int, String)], Bool) in
                defer { state.replies = [] }
                return (state.replies, state.stopped)
            }
            if stopped { return }
            for (id, text) in replies {
                unprivilegedRunning.remove(id)
                guard var client = clients[id] else { continue }
                answer(id, &client, text)
            }
            startWaitingRequests()
            expire()
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            let ids = Array(clients.keys)
            for id in ids {
                let c = clients[id]!
                let events: Int32
                switch c.phase.interest {
                case .read: events = Int32(POLLIN)
                case .write: events = Int32(POLLOUT)
                // While its request runs, watch only for a full hang-up (reported even with no events asked for).
                case .hangUp: events = 0
                }
                fds.append(pollfd(fd: c.fd, events: Int16(events), revents: 0))
            }
            let nearest = clients.values.compactMap(\.phase.deadline).min()
            let timeout = nearest.map { Int32(max(0, min(1000, ($0 - now()) * 1000)) + 1) } ?? 1000
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                // A socket that quietly stops answering while the daemon runs on is the worst outcome: a failed poll
                // (EINTR aside, only a kernel short of memory) is logged and tried again.
                if errno != EINTR {
                    logger.error("control socket poll failed; trying again", [("error", String(cString: strerror(errno)))])
                    usleep(100_000)
                }
                continue
            }
            if fds[0].revents != 0 { var drain = [UInt8](repeating: 0, count: 64); while read(wake.read, &drain, 64) > 0 {} }
            // Clients before new connections: the slots of clients that hung up are free before anyone is admitted.
            for (index, id) in ids.enumerated() where fds[index + 2].revents != 0 {
                service(id, revents: fds[index + 2].revents)
            }
            if fds[1].revents & Int16(POLLIN) != 0 { acceptSome() }
            warnAboutRefusals()
        }
    }

    /// Accepts what is waiting, at most `acceptBatch` connections a turn. Unbounded, a client that reconnects as
    /// soon as it is refused can keep the loop accepting forever on a busy machine (each refusal wakes the client,
    /// which connects again before the next `accept`), and the clients already connected are never served.
    private func acceptSome() {
        for _ in 0..<Self.acceptBatch {
            let fd = steward_accept4(listener, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if fd < 0 { return }
            let peer = PeerCredentials.of(fd) ?? PeerCredentials(pid: 0, uid: UInt32.max, gid: UInt32.max)
            if let refusal = admission(peer) {
                // Told at once and closed: a refused client holds nothing, not even a file descriptor.
                let line = Array((Self.error(refusal) + "\n").utf8)
                _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                close(fd)
                refusedByUID[peer.uid, default: 0] += 1
                continue
            }
            nextID += 1
            clients[nextID] = Client(fd: fd, peer: peer, privileged: peer.mayChange,
                                     phase: ClientPhase(now: now(), readTimeout: limits.readTimeoutSeconds, writeTimeout: limits.writeTimeoutSeconds))
        }
    }

    /// One warning line for the connections refused lately, so a flood shows in the log without flooding it.
    private func warnAboutRefusals() {
        guard !refusedByUID.isEmpty, now() - lastRefusalWarning >= 10 else { return }
        let counts = refusedByUID.sorted { $0.key < $1.key }.map { "uid \($0.key): \($0.value)" }.joined(separator: ", ")
        logger.warning("control connections refused: too many at once", [("refused", counts), ("limit_per_user", String(limits.maxClientsPerUser)),
                                                                          ("reserved_for_privileged", String(limits.reservedForPrivileged))])
        refusedByUID = [:]
        lastRefusalWarning = now()
    }

    /// Nil when `peer` may have one more connection; else why not. Root and Steward's user may use every slot;
    /// other users share what is not reserved for them, at most `maxClientsPerUser` each.
    private func admission(_ peer: PeerCredentials) -> String? {
        if clients.count >= limits.maxClients { return "too many clients (\(limits.maxClients)); try again" }
        if peer.mayChange { return nil }
        var others = 0, same = 0
        for client in clients.values where !client.privileged {
            others += 1
            if client.peer.uid == peer.uid { same += 1 }
        }
        if same >= limits.maxClientsPerUser {
            return "too many connections from uid \(peer.uid) (at most \(limits.maxClientsPerUser) at once); try again"
        }
        if others >= limits.maxClients - limits.reservedForPrivileged {
            return "too many clients; the remaining \(limits.reservedForPrivileged) slots are kept for root and steward's user; try again"
        }
        return nil
    }

    /// Hands a request on: root's and Steward's user's at once, other users' when fewer than
    /// `maxConcurrentUnprivileged` of theirs are being handled.
    private func submit(_ request: Request, privileged: Bool) {
        if privileged {
            requests.yield(request)
        } else {
            unprivilegedWaiting.append(request)
            startWaitingRequests()
        }
    }

    private func startWaitingRequests() {
        while unprivilegedRunning.count < limits.maxConcurrentUnprivileged, !unprivilegedWaiting.isEmpty {
            let request = unprivilegedWaiting.removeFirst()
            unprivilegedRunning.insert(request.client)
            requests.yield(request)
        }
    }

    private func service(_ id: Int, revents: Int16) {
        guard var client = clients[id] else { return }
        switch client.phase.state {
        case .writing:
            let n = client.output.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { client.output.removeFirst(n) }
            if n < 0 && errno != EAGAIN && errno != EINTR { return drop(id) }
            if client.phase.wrote(remaining: client.output.count) == .close { return drop(id) }
            clients[id] = client
            return
        case .awaitingReply:
            // Gone while its request runs: nothing to answer; the handler's work finishes regardless.
            if revents & Int16(POLLHUP | POLLERR) != 0, client.phase.hungUp() == .close { drop(id) }
            return
        case .reading:
            break
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(client.fd, &buffer, buffer.count)
        if n < 0 { if errno == EAGAIN || errno == EINTR { return }; return drop(id) }
        if n > 0 { client.input += buffer[..<n] }
        let newline = client.input.firstIndex(of: 0x0A)
        let lineLength = newline ?? client.input.count
        if lineLength > limits.maxLineBytes {
            return refuse(id, &client, "request longer than \(limits.maxLineBytes) bytes")
        }
        guard newline != nil || n == 0 else { clients[id] = client; return }
        // Closed its writing half without a byte: told so (a client that hung up altogether just misses the answer).
        if n == 0 && client.input.isEmpty { return refuse(id, &client, "empty request; try help") }
        var line = Array(client.input[..<lineLength])
        if line.last == 0x0D { line.removeLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            return refuse(id, &client, "the request is not valid UTF-8")
        }
        if let reply = immediate(text, client.peer) {
            answer(id, &client, reply)
            // Most replies fit the socket's buffer: sent now, the connection is done without another poll.
            service(id, revents: Int16(POLLOUT))
            return
        }
        guard client.phase.requestRead() == .submit else { return }
        clients[id] = client
        submit(Request(client: id, line: text, peer: client.peer), privileged: client.privileged)
    }

    /// Queues `reply` (one line) for the client; the connection closes once it is written.
    private func answer(_ id: Int, _ client: inout Client, _ reply: String) {
        client.output += Array((reply.hasSuffix("\n") ? reply : reply + "\n").utf8)
        client.phase.replyQueued(now: now())
        clients[id] = client
    }

    private func refuse(_ id: Int, _ client: inout Client, _ message: String) {
        answer(id, &client, Self.error(message))
        // Written at once, as immediate replies are: a client that hung up altogether fails the write and frees its
        // slot this turn rather than the next.
        service(id, revents: Int16(POLLOUT))
    }

    /// Clients past their deadline: a request that never came gets an error; a reply nobody reads is dropped.
    private func expire() {
        let t = now()
        for (id, var client) in clients {
            switch client.phase.deadlinePassed(now: t) {
            case .refuse(let message): refuse(id, &client, message)
            case .close: drop(id)
            case .none, .submit: break
            }
        }
    }

    private func drop(_ id: Int) {
        guard let client = clients.removeValue(forKey: id) else { return }
        close(client.fd)
        // A request still waiting for its turn goes with its client, so hang-ups cannot pile up work.
        if !client.privileged && client.phase.isAwaitingReply { unprivilegedWaiting.removeAll { $0.client == id } }
    }

    private func now() -> Double { MonotonicClock.seconds() }

    /// Connections accepted per turn of the loop (the rest wait in the listen backlog for the next turn).
    static let acceptBatch = 64

    static func error(_ message: String) -> String {
        JSON.object([("ok", .bool(false)), ("error", .string(message))]).rendered
    }
}

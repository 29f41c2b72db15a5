/// Where one control-socket client is, and what the poll loop does next: an enum of phases whose transitions return
/// actions, no I/O (the loop reads, writes, closes and hands requests on). A client reads one request line within
/// the read timeout, waits for its reply (no deadline: only a hang-up ends that wait), then has the reply written
/// within the write timeout and is closed.
struct ClientPhase: Sendable, Equatable {
    enum State: Sendable, Equatable {
        /// Reading the request line until `deadline`.
        case reading(deadline: Double)
        /// The request was handed on; the connection waits for the reply.
        case awaitingReply
        /// Writing the reply until `deadline`; the connection closes once it is written.
        case writing(deadline: Double)
    }

    enum Action: Sendable, Equatable {
        case none
        /// Hand the request line on.
        case submit
        /// Queue this error (one line) as the reply and write it.
        case refuse(String)
        /// Close the connection; a request of it still waiting for its turn goes with it.
        case close
    }

    /// What the loop polls the client's socket for.
    enum Interest: Sendable, Equatable {
        case read
        case write
        /// Nothing but a full hang-up (reported whatever is asked for): a client that merely closed its writing half
        /// still reads the reply.
        case hangUp
    }

    private(set) var state: State
    let readTimeout: Double
    let writeTimeout: Double

    /// A client just accepted at `now`.
    init(now: Double, readTimeout: Double, writeTimeout: Double) {
        self.readTimeout = readTimeout
        self.writeTimeout = writeTimeout
        state = .reading(deadline: now + readTimeout)
    }

    var interest: Interest {
        switch state {
        case .reading: .read
        case .awaitingReply: .hangUp
        case .writing: .write
        }
    }

    /// When the loop must wake for this client; nil while it waits for its reply.
    var deadline: Double? {
        switch state {
        case .reading(let deadline), .writing(let deadline): deadline
        case .awaitingReply: nil
        }
    }

    var isAwaitingReply: Bool { state == .awaitingReply }

    /// A whole request line was read and no immediate reply answers it: it is handed on.
    mutating func requestRead() -> Action {
        guard case .reading = state else { return .none }
        state = .awaitingReply
        return .submit
    }

    /// The reply (or a refusal) is queued at `now`: written from now on, within the write timeout. A client already
    /// writing keeps its deadline.
    mutating func replyQueued(now: Double) {
        if case .writing = state { return }
        state = .writing(deadline: now + writeTimeout)
    }

    /// Some of the reply was written, `remaining` bytes are left: none left closes the connection.
    mutating func wrote(remaining: Int) -> Action {
        guard case .writing = state else { return .none }
        return remaining == 0 ? .close : .none
    }

    /// The socket reported a hang-up or an error: while waiting for its reply there is nothing to answer (the
    /// handler's work finishes regardless); while reading or writing, the read or the write says what to do.
    mutating func hungUp() -> Action {
        state == .awaitingReply ? .close : .none
    }

    /// `now` is past the deadline (or not): a request line that never came gets an error, written within a second;
    /// a reply nobody reads is dropped; a client waiting for its reply has no deadline.
    mutating func deadlinePassed(now: Double) -> Action {
        switch state {
        case .reading(let deadline) where deadline < now:
            state = .writing(deadline: now + 1)
            return .refuse("timed out waiting for a request line (\(Int(readTimeout)) s)")
        case .writing(let deadline) where deadline < now:
            return .close
        default:
            return .none
        }
    }
}

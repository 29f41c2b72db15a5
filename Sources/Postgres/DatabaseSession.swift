import Dispatch
import Logging
import Synchronization

/// One database connection used from async code: every libpq call runs on the session's own serial
/// queue (never on the cooperative thread pool), the connection is opened on first use and again after
/// it breaks, and cancelling the awaiting task cancels the running statement on the server.
public final class DatabaseSession: Sendable {
    /// Where it connects.
    public let target: ConnectionString
    private let logger: Logger
    private let connectTimeoutSeconds: Int
    private let settings: [(String, String)]
    private let queue: DispatchQueue
    private let state = Mutex<State>(State())

    private struct State {
        var connection: UncheckedConnection?
        var canceller: Canceller?
        /// Increases each time a new connection is opened: session state (locks, settings) from an older one is gone.
        var generation = 0
    }

    /// A connection handed between the queue and the state; only ever touched on `queue`.
    private struct UncheckedConnection: @unchecked Sendable { let value: Connection }

    /// A session for `target`; `settings` are applied (`set_config`) on every new connection.
    public init(_ target: ConnectionString, label: String, logger: Logger, connectTimeoutSeconds: Int = 10,
                settings: [(String, String)] = []) {
        self.target = target
        self.logger = logger
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.settings = settings
        self.queue = DispatchQueue(label: "steward.db.\(label)")
    }

    /// How many connections this session has opened; a change means session locks were lost.
    public var generation: Int { state.withLock { $0.generation } }

    /// Runs `body` with the connection on the session's queue; reconnects first if needed.
    /// Cancelling the calling task sends a cancel request to the server.
    public func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                queue.async { [self] in
                    continuation.resume(with: Result { try body(try self.connectionOnQueue()) })
                }
            }
        } onCancel: {
            _ = state.withLock { $0.canceller }?.cancel()
        }
    }

    /// Closes the connection (on the queue); the next `run` opens a new one.
    public func reset() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                state.withLock { $0.connection = nil; $0.canceller = nil }
                continuation.resume()
            }
        }
    }

    private func connectionOnQueue() throws -> Connection {
        if let existing = state.withLock({ $0.connection }), existing.value.isOpen { return existing.value }
        let connection = try Connection(target, logger: logger, connectTimeoutSeconds: connectTimeoutSeconds)
        for (name, value) in settings { try connection.setSession(name, value) }
        state.withLock {
            $0.connection = UncheckedConnection(value: connection)
            $0.canceller = connection.makeCanceller()
            $0.generation += 1
        }
        return connection
    }
}

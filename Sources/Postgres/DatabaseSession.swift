import BlockingExecutor
import StewardLog
import Synchronization

/// One database connection used from async code: every libpq call runs on the shared `BlockingExecutor` (never on
/// the cooperative thread pool), one call at a time in order; the connection is opened on first use and again after
/// it breaks, and cancelling the awaiting task while its call runs cancels the running statement on the server.
public final class DatabaseSession: Sendable {
    /// Where it connects.
    public let target: ConnectionString
    private let logger: Logger
    private let connectTimeoutSeconds: Int
    private let settings: [(String, String)]
    private let lane: SerialLane
    private let state = Mutex<State>(State())

    private struct State {
        var connection: UncheckedConnection?
        var canceller: Canceller?
        /// Increases each time a new connection is opened: session state (locks, settings) from an older one is gone.
        var generation = 0
    }

    /// The connection kept between calls: only ever used inside the lane, one call at a time.
    private struct UncheckedConnection: @unchecked Sendable { let value: Connection }

    /// A session for `target`; `settings` are applied (`set_config`) on every new connection.
    public init(_ target: ConnectionString, label: String, logger: Logger, connectTimeoutSeconds: Int = 10,
                settings: [(String, String)] = [], executor: BlockingExecutor = .shared) {
        self.target = target
        self.logger = logger
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.settings = settings
        self.lane = SerialLane(on: executor)
    }

    /// How many connections this session has opened; a change means session locks were lost.
    public var generation: Int { state.withLock { $0.generation } }

    /// Runs `body` with the connection, after the session's earlier calls; reconnects first if needed.
    /// Cancelling the calling task while `body` runs sends a cancel request to the server (`PQcancel`).
    public func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await lane.run({ [self] in
            let connection = try self.openConnection()
            connection.clearCancelRequest()
            return try body(connection)
        },
                           onCancel: { [self] in _ = state.withLock { $0.canceller }?.cancel() })
    }

    /// Closes the connection (after the calls before it); the next `run` opens a new one.
    public func reset() async {
        _ = try? await lane.run { [self] in state.withLock { $0.connection = nil; $0.canceller = nil } }
    }

    /// The open connection, or a new one with the session's settings applied; only called inside the lane.
    private func openConnection() throws -> Connection {
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

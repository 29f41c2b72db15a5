import BlockingExecutor
import Synchronization

/// An `HTTPClient` used from async code: its blocking libcurl calls run on the shared `BlockingExecutor`, one at a
/// time; cancelling the awaiting task aborts the running transfer (and every later one of this session).
public final class HTTPSession: Sendable {
    private let executor: BlockingExecutor
    private let client: Mutex<HTTPClient>
    private let cancellation: HTTPCancellation

    /// A session over a new client; `cancellation` defaults to the current task's, as `HTTPClient`'s does.
    public init(options: HTTPClient.Options = HTTPClient.Options(), cancellation: HTTPCancellation? = HTTPCancellation.current,
                executor: BlockingExecutor = .shared) {
        let client = HTTPClient(options: options, cancellation: cancellation)
        self.cancellation = client.cancellation
        self.client = Mutex(client)
        self.executor = executor
    }

    /// Runs `body` with the client on an executor thread.
    public func run<T: Sendable>(_ body: @escaping @Sendable (HTTPClient) throws -> T) async throws -> T {
        try await executor.run({ [self] in try client.withLock { try body($0) } },
                               onCancel: { [cancellation] in cancellation.cancel() })
    }
}

import BlockingExecutor
import HTTP
import Synchronization

/// A Storage client used from async code: its blocking libcurl calls run on the shared `BlockingExecutor`, never on
/// the cooperative thread pool, one at a time; cancelling the awaiting task aborts the running transfer (and every
/// later one of the client, as a job's cancellation does).
public final class StorageSession: Sendable {
    private let executor: BlockingExecutor
    /// The client, used by one call at a time.
    private let client: Mutex<StorageClient>
    private let cancellation: HTTPCancellation

    public init(client: sending StorageClient, executor: BlockingExecutor = .shared) {
        self.cancellation = client.cancellation
        self.client = Mutex(client)
        self.executor = executor
    }

    /// Runs `body` with the client on an executor thread; cancelling the calling task cancels its transfers.
    public func run<T: Sendable>(_ body: @escaping @Sendable (StorageClient) throws -> T) async throws -> T {
        try await executor.run({ [self] in try client.withLock { try body($0) } },
                               onCancel: { [cancellation] in cancellation.cancel() })
    }

    /// Runs `body` with the client on the calling thread and waits for it: for callers already on an executor thread
    /// (inside a database session's call) that must make the request inside their own critical section.
    public func runBlocking<T: Sendable>(_ body: (StorageClient) throws -> T) throws -> T {
        try client.withLock { try body($0) }
    }
}

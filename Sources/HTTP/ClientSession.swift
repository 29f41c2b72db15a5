import BlockingExecutor
import Synchronization

/// A client over one libcurl handle (`HTTPClient` and the API clients built on it), whose transfers its
/// `cancellation` stops.
public protocol CancellableClient: SendableMetatype {
    var cancellation: HTTPCancellation { get }
}

extension HTTPClient: CancellableClient {}

/// A client used from async code: its blocking libcurl calls run on the shared `BlockingExecutor`, never on the
/// cooperative thread pool, one at a time; cancelling the awaiting task aborts the running transfer (and every later
/// one of the client, as a job's cancellation does). The one way a non-`Sendable` client is shared.
public final class ClientSession<Client: CancellableClient>: Sendable {
    private let executor: BlockingExecutor
    /// The client, used by one call at a time.
    private let client: Mutex<Client>
    private let cancellation: HTTPCancellation

    public init(client: sending Client, executor: BlockingExecutor = .shared) {
        self.cancellation = client.cancellation
        self.client = Mutex(client)
        self.executor = executor
    }

    /// Runs `body` with the client on an executor thread; cancelling the calling task cancels its transfers.
    public func run<T: Sendable>(_ body: @escaping @Sendable (Client) throws -> T) async throws -> T {
        try await executor.run({ [self] in try client.withLock { try body($0) } },
                               onCancel: { [cancellation] in cancellation.cancel() })
    }

    /// Runs `body` with the client on the calling thread and waits for it: for callers already on an executor thread
    /// (inside a database session's call) that must make the request inside their own critical section.
    public func runBlocking<T: Sendable>(_ body: (Client) throws -> T) throws -> T {
        try client.withLock { try body($0) }
    }
}

/// An `HTTPClient` used from async code.
public typealias HTTPSession = ClientSession<HTTPClient>

extension ClientSession where Client == HTTPClient {
    /// A session over a new client; `cancellation` defaults to the current task's, as `HTTPClient`'s does.
    public convenience init(options: HTTPClient.Options = HTTPClient.Options(), cancellation: HTTPCancellation? = HTTPCancellation.current,
                            executor: BlockingExecutor = .shared) {
        self.init(client: HTTPClient(options: options, cancellation: cancellation), executor: executor)
    }
}

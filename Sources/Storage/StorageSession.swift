import Dispatch
import Logging

/// A Storage client used from async code: its blocking libcurl calls run on a serial queue of its own,
/// never on the cooperative thread pool.
public final class StorageSession: @unchecked Sendable {
    private let queue = DispatchQueue(label: "steward.storage")
    /// Only touched on `queue`.
    private let client: StorageClient

    public init(client: StorageClient) { self.client = client }

    /// Runs `body` with the client on the session's queue.
    public func run<T: Sendable>(_ body: @escaping @Sendable (StorageClient) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [client] in continuation.resume(with: Result { try body(client) }) }
        }
    }

    /// Runs `body` with the client on the session's queue and waits for it: for callers already off the cooperative
    /// pool (a database session's queue) that must make the request inside their own critical section.
    public func runBlocking<T>(_ body: (StorageClient) throws -> T) rethrows -> T {
        try queue.sync { try body(client) }
    }
}

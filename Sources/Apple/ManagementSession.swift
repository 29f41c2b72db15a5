import BlockingExecutor
import HTTP
import Synchronization

/// The Management API used from async code: its blocking libcurl calls run on the shared `BlockingExecutor`, one at
/// a time; cancelling the awaiting task aborts the running transfer (and every later one of this session).
public final class ManagementSession: Sendable {
    private let executor: BlockingExecutor
    private let api: Mutex<ManagementAPI>
    private let cancellation: HTTPCancellation

    /// A session over a new `ManagementAPI`; made inside a job run, its transfers stop with the run.
    public init(baseURL: String = "https://api.supabase.com", projectRef: String, token: String, executor: BlockingExecutor = .shared) {
        let api = ManagementAPI(baseURL: baseURL, projectRef: projectRef, token: token)
        self.cancellation = api.cancellation
        self.api = Mutex(api)
        self.executor = executor
    }

    /// Runs `body` with the API client on an executor thread.
    public func run<T: Sendable>(_ body: @escaping @Sendable (ManagementAPI) throws -> T) async throws -> T {
        try await executor.run({ [self] in try api.withLock { try body($0) } },
                               onCancel: { [cancellation] in cancellation.cancel() })
    }
}

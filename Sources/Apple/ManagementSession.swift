import BlockingExecutor
import HTTP

extension ManagementAPI: CancellableClient {}

/// The Management API used from async code (see `ClientSession`).
public typealias ManagementSession = ClientSession<ManagementAPI>

extension ClientSession where Client == ManagementAPI {
    /// A session over a new `ManagementAPI`; made inside a job run, its transfers stop with the run.
    public convenience init(baseURL: String = "https://api.supabase.com", projectRef: String, token: String, executor: BlockingExecutor = .shared) {
        self.init(client: ManagementAPI(baseURL: baseURL, projectRef: projectRef, token: token), executor: executor)
    }
}

/// A job that deletes through a project's Storage API: `steward fleet job run` gives it each target's own
/// (`[target.NAME] storage_url` and `service_key_file`) and refuses a target without them, since one Storage API for
/// a fleet would let a target's run delete another project's objects.
public protocol StorageJob: Job {
    /// The same job, working through the Storage API at `url` with the service key in `keyFile`.
    func using(storageURL url: String, serviceKeyFile keyFile: String) -> Self
}

extension JobCatalog.Configured {
    /// The same settings with `job` in place of the configured one (a fleet target's own Storage, say).
    public func replacing(job: any Job) -> JobCatalog.Configured {
        JobCatalog.Configured(settings: settings, job: job)
    }
}

import Config
import FoundationEssentials
import Jobs

/// Everything `steward run` needs from its configuration, validated as a whole before anything starts.
public struct DaemonSettings: Sendable {
    public let config: StewardConfig
    public let jobs: [JobCatalog.Configured]
    /// The jobs this Steward knows (read again on reload).
    public let catalog: JobCatalog
    /// The file to read again on reload (nil: environment and flags only).
    public let path: String?

    /// Loads and checks `path`: a bad key or value anywhere, job sections included, throws naming file, line and key.
    public static func load(path: String?, environment: [String: String], catalog: JobCatalog,
                            overrides: (inout StewardConfig) -> Void = { _ in }) throws(ConfigError) -> DaemonSettings {
        var config = try StewardConfig.load(path: path, environment: environment)
        overrides(&config)
        let jobs = try catalog.configure(config.jobSections, config: config)
        return DaemonSettings(config: config, jobs: jobs, catalog: catalog, path: path)
    }

    /// The jobs that are enabled.
    public var enabledJobs: [JobCatalog.Configured] { jobs.filter { $0.settings.enabled } }

    /// This instance's name in history rows and status: `[daemon] host`, else the machine's host name.
    public var host: String {
        if let host = config.host { return host }
        return ProcessInfo.processInfo.hostName
    }
}

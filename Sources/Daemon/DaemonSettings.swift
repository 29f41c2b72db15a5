import Config
import FoundationEssentials
import Jobs
import Migrations

/// Everything `steward run` needs from its configuration, validated as a whole before anything starts.
public struct DaemonSettings: Sendable {
    public let config: StewardConfig
    public let jobs: [JobCatalog.Configured]
    /// The jobs this Steward knows (read again on reload).
    public let catalog: JobCatalog
    /// The file to read again on reload (nil: environment and flags only).
    public let path: String?

    /// The settings of a configuration loaded once by the caller: every job section is checked here, a bad key or
    /// value throws naming file, line and key.
    public init(config: StewardConfig, catalog: JobCatalog, path: String?) throws(ConfigError) {
        self.config = config
        self.jobs = try catalog.configure(config.jobSections, config: config)
        self.catalog = catalog
        self.path = path
        migrationsDirectory = MigrationsConfig.folder(config)
    }

    /// The jobs that are enabled.
    public var enabledJobs: [JobCatalog.Configured] { jobs.filter { $0.settings.enabled } }

    /// This instance's name in history rows and status: `[daemon] host`, else the machine's host name.
    public var host: String { config[DaemonConfig.host] ?? ProcessInfo.processInfo.hostName }

    /// The migrations folder (`MigrationsConfig.folder`), decided once when the settings are read (again on reload),
    /// not on every control request.
    public let migrationsDirectory: String
}

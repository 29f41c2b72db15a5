import SecurityAdvisor
import AppleSecret
import Config
import Daemon
import Fleet
import Jobs
import Lint
import Migrations
import Storage

/// `[database]`: which database and how to log in; read at start by every command and the daemon.
public enum DatabaseConfig {
    public static let url = ConfigKey("database", "url", ConfigValueType<String>.text.optional, default: nil,
                               takes: "a postgresql:// URL or key=value conninfo", defaultText: "unset (then STEWARD_DATABASE_URL or --database-url)",
                               environment: "STEWARD_DATABASE_URL", appliesOnReload: false)
    /// A file holding the database password (must not be readable by group or others).
    public static let passwordFile = ConfigKey("database", "password_file", ConfigValueType<String>.secretFile.optional, default: nil,
                                        takes: "a file path", defaultText: "unset (the URL or ~/.pgpass)", appliesOnReload: false,
                                        secret: "database password file")
    public static let connectTimeout = ConfigKey("database", "connect_timeout", .integer(1...3600), default: 10, takes: "whole seconds from 1 to 3600",
                                          appliesOnReload: false)
    public static let section = ConfigSection("database", keys: [url, passwordFile, connectTimeout])
}

/// `[log]`: the process's logger is made once at start.
public enum LogConfig {
    public static let level = ConfigKey("log", "level", .choice(["debug", "info", "notice", "warning", "error"]), default: "info",
                                 takes: "debug, info, notice, warning or error", environment: "STEWARD_LOG_LEVEL", appliesOnReload: false)
    public static let format = ConfigKey("log", "format", .choice(["text", "json"]), default: "text", takes: "text or json", appliesOnReload: false)
    public static let section = ConfigSection("log", keys: [level, format, JobsConfig.progressInterval])
}

extension ConfigSchema {
    /// Every section this Steward reads, in the order the manual and the example config describe them: a new section
    /// is one more entry here, declared by the module that reads it. `[job.NAME]` sections belong to the job catalogue.
    public static let steward = ConfigSchema(sections: [
        DatabaseConfig.section,
        MigrationsConfig.section,
        MigrationsConfig.verifySection,
        LintConfig.section,
        LogConfig.section,
        DaemonConfig.controlSection,
        StorageConfig.section,
        DaemonConfig.metricsSection,
        DaemonConfig.daemonSection,
        AppleConfig.section,
        AdvisorConfig.section,
        FleetConfig.section,
    ], families: ["job", "target"])
}

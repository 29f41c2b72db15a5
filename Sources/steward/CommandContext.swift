#if canImport(Glibc)
import Glibc
#endif
import CLI
import Config
import Daemon
import Fleet
import StewardLog
import Migrations
import Postgres

/// What a command needs: parsed arguments, the merged config, a logger, and a way to connect.
struct CommandContext {
    let arguments: ParsedArguments
    let config: StewardConfig
    let logger: Logger
    /// The `STEWARD_*` variables read at start.
    let environment: [String: String]
    /// Applies the command-line flags over a loaded config (again on reload).
    let overrides: @Sendable (inout StewardConfig) -> Void

    var json: Bool { arguments.flag("json") }

    /// The environment variables Steward reads.
    static let environmentKeys = ["STEWARD_DATABASE_URL", "STEWARD_MIGRATIONS_DIR", "STEWARD_LOG_LEVEL", "STEWARD_CONTROL_SOCKET",
                                  "STEWARD_PROJECT", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "CREDENTIALS_DIRECTORY"]

    /// Merges flags over environment over file; throws `ConfigError` or `UsageError`.
    init(spec: CommandSpec, arguments: ParsedArguments) throws {
        var environment: [String: String] = [:]
        for key in Self.environmentKeys {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        let flags = arguments
        let overrides: @Sendable (inout StewardConfig) -> Void = { config in
            if let url = flags.value("database-url") {
                config.databaseURL = url
                config.databaseURLOrigin = "--database-url"
            }
            if let dir = flags.value("migrations") { config.migrationsDirectory = dir }
            if let include = flags.value("include") { config.migrationsInclude = include.split(separator: ",").map(String.init) }
            if let level = flags.value("log-level") { config.logLevel = level }
            if let format = flags.value("log-format") { config.logFormat = format }
            if let socket = flags.value("socket") { config.controlSocket = socket }
            if let url = flags.value("storage-url") { config.storageURL = url }
            if let file = flags.value("service-key-file") { config.storageServiceKeyFile = file }
        }
        var config = try StewardConfig.load(path: arguments.value("config"), environment: environment)
        overrides(&config)
        try config.validate()
        guard let level = LogLevel(name: config.logLevel) else {
            throw UsageError(command: spec.name, message: "--log-level must be debug, info, notice, warning or error")
        }
        guard let format = LogSink.Format(rawValue: config.logFormat) else {
            throw UsageError(command: spec.name, message: "--log-format must be text or json")
        }
        self.arguments = arguments
        self.config = config
        self.environment = environment
        self.overrides = overrides
        self.logger = Logger(label: "steward", sink: LogSink(minimumLevel: level, format: format))
    }

    /// The database to use, with the password from `password_file` (or a systemd credential) if set.
    func connectionTarget() throws -> ConnectionString {
        guard let url = config.databaseURL else {
            throw ConfigError(file: config.sourceFile ?? "(no config file)", key: "[database] url",
                              message: "no database URL: pass --database-url, set STEWARD_DATABASE_URL, or set [database] url")
        }
        return try ConnectionTarget.resolve(url: url, passwordFile: config.databasePasswordFile, urlError: config.databaseURLError,
                                            passwordPlace: (config.sourceFile ?? "(flags and environment)", config.lines["[database] password_file"],
                                                            "[database] password_file"))
    }

    /// Where a shadow database may be created: `--shadow-url`, then `[verify] shadow_url`; nil for the project's own server.
    func shadowServer() throws -> ConnectionString? {
        guard let url = arguments.value("shadow-url") ?? config.verifyShadowURL else { return nil }
        do { return try ConnectionString(url) }
        catch let error as PostgresError {
            throw ConfigError(file: config.sourceFile ?? "(flags and environment)", key: "[verify] shadow_url", message: error.message)
        }
    }

    /// Opens a connection to the configured database.
    func connect() throws -> Connection {
        let target = try connectionTarget()
        logger.named("postgres").debug("connecting", [("target", target.description)])
        return try Connection(target, logger: logger, connectTimeoutSeconds: config.connectTimeoutSeconds)
    }

    /// The config as `steward run` needs it: every job section checked too.
    func daemonSettings() throws -> DaemonSettings {
        try DaemonSettings.load(path: arguments.value("config"), environment: environment, catalog: .steward, overrides: overrides)
    }

    /// The migration files from the configured folder (`supabase/migrations` by default in a Supabase CLI project);
    /// with `deferParsing` only read and checksummed, for a run that parses what it needs.
    func migrationSource(deferParsing: Bool = false) throws -> MigrationSource {
        try MigrationSource(directory: migrationsDirectory, include: config.migrationsInclude, deferParsing: deferParsing)
    }

    /// The configured migrations folder (`supabase/migrations` by default in a Supabase CLI project).
    var migrationsDirectory: String {
        !config.migrationsDirectoryIsSet && SupabaseHistoryMode.workingFolderIsCLIProject() ? SupabaseHistoryMode.cliDirectory : config.migrationsDirectory
    }
}

/// Runs a command and maps every error to its exit code and one clear message.
enum CommandRunner {
    static func run(_ command: any StewardCommand.Type, _ rawArguments: [String]) async -> ExitCode {
        do {
            guard let context = try context(command, rawArguments) else { return .ok }
            return try await command.run(context)
        } catch {
            return exitCode(reporting: error)
        }
    }

    /// `run` for a command that never awaits: called before the first suspension, it runs on the calling thread.
    static func runBlocking(_ command: any BlockingStewardCommand.Type, _ rawArguments: [String]) -> ExitCode {
        do {
            guard let context = try context(command, rawArguments) else { return .ok }
            return try command.runBlocking(context)
        } catch {
            return exitCode(reporting: error)
        }
    }

    /// The command's context, or nil when `--help` was asked for (and printed).
    private static func context(_ command: any StewardCommand.Type, _ rawArguments: [String]) throws -> CommandContext? {
        let arguments = try command.spec.parse(rawArguments)
        if arguments.flag("help") {
            Output.print(command.spec.help)
            return nil
        }
        return try CommandContext(spec: command.spec, arguments: arguments)
    }

    /// Prints `error` as one clear message and returns its exit code.
    private static func exitCode(reporting error: any Error) -> ExitCode {
        switch error {
        case let error as UsageError:
            Output.error(error.description)
            return .usage
        case let error as ConfigError:
            Output.error("config error: \(error)")
            return .config
        case let error as MigrationError:
            Output.error(error.description)
            switch error {
            case .drift, .adoptionRefused: return .drift
            case .database(let pg): return exitCode(for: pg)
            case .statementFailed(_, _, let pg, _) where pg.kind == .connectionLost: return exitCode(for: pg)
            default: return .failure
            }
        case let error as PostgresError:
            Output.error(error.description + (error.hint.map { "\n  hint: \($0)" } ?? ""))
            return exitCode(for: error)
        default:
            Output.error("\(error)")
            return .failure
        }
    }

    static func exitCode(for error: PostgresError) -> ExitCode {
        switch error.kind {
        case .connectionFailed, .connectionLost: .unavailable
        case .transactionPooler, .invalidArgument: .config
        default: .failure
        }
    }
}

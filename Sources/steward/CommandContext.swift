#if canImport(Glibc)
import Glibc
#endif
import CLI
import Config
import Daemon
import FileSystem
import Fleet
import StewardLog
import Migrations
import OutputText
import Postgres
import Storage

/// What a command needs: parsed arguments, the config read once (file, environment, flags), a logger, and a way to
/// connect.
struct CommandContext {
    let arguments: ParsedArguments
    let config: StewardConfig
    /// The configuration with every job section checked: read once, at start, for every command (so a CI step's
    /// `steward migrate` refuses a file the daemon would refuse).
    let settings: DaemonSettings
    /// The fleet's targets (`[target.NAME]`), read once with the file.
    let targets: [FleetTarget]
    let logger: Logger
    /// The variables read at start: the keys' own (`STEWARD_*`) and systemd's.
    let environment: [String: String]

    var json: Bool { arguments.flag("json") }

    /// The environment variables Steward reads: those the keys declare, then systemd's.
    static let environmentKeys = ConfigSchema.steward.environmentVariables.map(\.variable)
        + ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "CREDENTIALS_DIRECTORY"]

    /// A flag that sets a key (a flag beats the environment and the file).
    struct KeyFlag: Sendable {
        let flag: String
        /// The variable the flag beats, if the key has one: not even read when the flag is given.
        let environment: String?
        let apply: @Sendable (inout StewardConfig, String) throws(ConfigError) -> Void

        init<Value>(_ flag: String, _ key: ConfigKey<Value>) {
            self.flag = flag
            environment = key.environment
            apply = { (config: inout StewardConfig, text: String) throws(ConfigError) in try config.override(key, text: text, origin: "--" + flag) }
        }
    }

    /// The flags that set keys.
    static let keyFlags: [KeyFlag] = [
        KeyFlag("database-url", DatabaseConfig.url),
        KeyFlag("migrations", MigrationsConfig.directory),
        KeyFlag("include", MigrationsConfig.include),
        KeyFlag("log-level", LogConfig.level),
        KeyFlag("log-format", LogConfig.format),
        KeyFlag("socket", DaemonConfig.controlSocket),
        KeyFlag("storage-url", StorageConfig.url),
        KeyFlag("service-key-file", StorageConfig.serviceKeyFile),
    ]

    /// Reads the config once, flags over environment over file; throws `ConfigError` or `UsageError`.
    init(spec: CommandSpec, arguments: ParsedArguments) throws {
        var environment: [String: String] = [:]
        for key in Self.environmentKeys {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        let config = try Self.load(arguments: arguments, environment: environment, spec: spec)
        self.arguments = arguments
        self.config = config
        self.settings = try DaemonSettings(config: config, catalog: .steward, path: arguments.value("config"))
        // The targets' keys and stages are part of the file: a bad one stops every command, as a bad job key does.
        self.targets = try FleetTarget.read(config)
        // A flag's mistake is a usage error before anything starts, not when a shadow database is first needed.
        if let flag = arguments.value("shadow-url") {
            do { _ = try ConnectionString(flag) }
            catch let error as PostgresError { throw UsageError(command: spec.name, message: "--shadow-url: \(error.message)") }
        }
        self.environment = environment
        let level = LogLevel(name: config[LogConfig.level]) ?? .info
        let format = LogSink.Format(rawValue: config[LogConfig.format]) ?? .text
        self.logger = Logger(label: "steward", sink: LogSink(minimumLevel: level, format: format))
    }

    /// The configuration from `--config`, the environment and the flags (again on reload). A flag's bad value is a
    /// usage error (exit 64), as a flag's mistake always is; the file's and the environment's are config errors.
    static func load(arguments: ParsedArguments, environment: [String: String], spec: CommandSpec) throws -> StewardConfig {
        // A variable a given flag beats is left unread: its bad value stops nothing the flag replaces.
        var environment = environment
        for flag in keyFlags where arguments.value(flag.flag) != nil { flag.environment.map { environment[$0] = nil } }
        var config = try StewardConfig.load(path: arguments.value("config"), environment: environment, schema: .steward)
        for flag in keyFlags {
            guard let value = arguments.value(flag.flag) else { continue }
            do { try flag.apply(&config, value) }
            catch { throw UsageError(command: spec.name, message: "--\(flag.flag): \(error.message)") }
        }
        return config
    }

    /// The database to use, with the password from `password_file` (or a systemd credential) if set.
    func connectionTarget() throws -> ConnectionString { try Self.connectionTarget(config) }

    /// `[database]`'s connection, password file read.
    static func connectionTarget(_ config: StewardConfig) throws -> ConnectionString {
        guard let url = config[DatabaseConfig.url] else {
            throw ConfigError(file: config.sourceFile ?? "(no config file)", key: "[database] url",
                              message: "no database URL: pass --database-url, set STEWARD_DATABASE_URL, or set [database] url")
        }
        var target: ConnectionString
        do { target = try ConnectionString(url) }
        catch let error as PostgresError { throw config.error(DatabaseConfig.url, error.message) }
        if let password = try config.readSecret(DatabaseConfig.passwordFile) {
            do { target = try target.with(password: password) }
            catch let error as PostgresError {
                throw ConfigError(file: config[DatabaseConfig.passwordFile] ?? "", key: "[database] password_file",
                                  message: "the password cannot be passed to libpq: \(error.message)")
            }
        }
        return target
    }

    /// Where a shadow database may be created: `--shadow-url`, then `[verify] shadow_url`; nil for the project's own server.
    func shadowServer() throws -> ConnectionString? {
        // Checked at start (`init`): a flag that got this far reads.
        if let flag = arguments.value("shadow-url") { return try ConnectionString(flag) }
        guard let url = config[MigrationsConfig.shadowURL] else { return nil }
        do { return try ConnectionString(url) }
        catch let error as PostgresError { throw config.error(MigrationsConfig.shadowURL, error.message) }
    }

    /// Opens a connection to the configured database.
    func connect() throws -> Connection {
        let target = try connectionTarget()
        logger.named("postgres").debug("connecting", [("target", target.description)])
        return try Connection(target, logger: logger, connectTimeoutSeconds: config[DatabaseConfig.connectTimeout])
    }

    /// The config as `steward run` needs it: every job section checked too (the file is not read again).
    func daemonSettings() throws -> DaemonSettings { settings }

    /// What `config check`, the daemon's start and every reload check beyond the keys and sections: the database URL
    /// and its password file, every secret file, and each fleet target's URL and password file, read now. Returns
    /// notes on what cannot be checked here (`credential:` names outside systemd).
    static func startChecks(_ config: StewardConfig, targets: [FleetTarget], environment: [String: String]) throws -> [String] {
        if config[DatabaseConfig.url] != nil { _ = try connectionTarget(config) }
        if let shadow = config[MigrationsConfig.shadowURL] {
            do { _ = try ConnectionString(shadow) }
            catch let error as PostgresError { throw config.error(MigrationsConfig.shadowURL, error.message) }
        }
        return try config.checkSecretFiles()
            + FleetTarget.checkConnections(targets, credentialsAvailable: environment["CREDENTIALS_DIRECTORY"] != nil)
            + folderNotes(config, targets: targets)
    }

    /// The folders of migration files the configuration names that are not folders here (relative ones from the
    /// working folder): notes, not errors. The daemon runs its jobs without them (skipping its schema check at
    /// start); migrate, status and verify stop naming them.
    static func folderNotes(_ config: StewardConfig, targets: [FleetTarget]) -> [String] {
        // A link to a folder is a folder here, as migrate reads it.
        func isFolder(_ path: String) -> Bool { (try? FileStatus.of(path, followingLinks: true))??.kind == .folder }
        var named = [("[migrations] dir", MigrationsConfig.folder(config))] + config[MigrationsConfig.include].map { ("[migrations] include", $0) }
        for target in targets {
            if let folder = target.migrationsDirectory { named.append(("[target.\(target.name)] migrations_dir", folder)) }
            for folder in target.include ?? [] { named.append(("[target.\(target.name)] include", folder)) }
        }
        return named.filter { !isFolder($0.1) }.map { key, folder in
            "\(key): \(LogText.escaped(folder)) is not a folder here (steward migrate, status and verify need it; the daemon skips its schema check without it)"
        }
    }

    /// Reads file, environment and flags again as at start, for a reload.
    func settingsLoader(spec: CommandSpec) -> @Sendable () throws(ConfigError) -> DaemonSettings {
        let arguments = arguments, environment = environment
        return { () throws(ConfigError) -> DaemonSettings in
            // The same checks as at start: a file the next start would refuse is refused now, the running one kept.
            do {
                let config = try Self.load(arguments: arguments, environment: environment, spec: spec)
                let settings = try DaemonSettings(config: config, catalog: .steward, path: arguments.value("config"))
                _ = try Self.startChecks(config, targets: FleetTarget.read(config), environment: environment)
                return settings
            } catch {
                throw (error as? ConfigError) ?? ConfigError(file: arguments.value("config") ?? "(flags)", message: "\(error)")
            }
        }
    }

    /// The migration files from the configured folder (`supabase/migrations` by default in a Supabase CLI project);
    /// with `deferParsing` only read and checksummed, for a run that parses what it needs.
    func migrationSource(deferParsing: Bool = false) throws -> MigrationSource {
        try MigrationSource(directory: MigrationsConfig.folder(config), include: config[MigrationsConfig.include], deferParsing: deferParsing)
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

#if canImport(Glibc)
import Glibc
#endif
import CLI
import Config
import Logging
import Migrations
import Postgres

/// What a command needs: parsed arguments, the merged config, a logger, and a way to connect.
struct CommandContext {
    let arguments: ParsedArguments
    let config: StewardConfig
    let logger: Logger

    var json: Bool { arguments.flag("json") }

    /// Merges flags over environment over file; throws `ConfigError` or `UsageError`.
    init(spec: CommandSpec, arguments: ParsedArguments) throws {
        var environment: [String: String] = [:]
        for key in ["STEWARD_DATABASE_URL", "STEWARD_MIGRATIONS_DIR", "STEWARD_LOG_LEVEL"] {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        var config = try StewardConfig.load(path: arguments.value("config"), environment: environment)
        if let url = arguments.value("database-url") { config.databaseURL = url }
        if let dir = arguments.value("migrations") { config.migrationsDirectory = dir }
        if let level = arguments.value("log-level") { config.logLevel = level }
        if let format = arguments.value("log-format") { config.logFormat = format }
        guard let level = LogLevel(name: config.logLevel) else {
            throw UsageError(command: spec.name, message: "--log-level must be debug, info, notice, warning or error")
        }
        guard let format = LogSink.Format(rawValue: config.logFormat) else {
            throw UsageError(command: spec.name, message: "--log-format must be text or json")
        }
        self.arguments = arguments
        self.config = config
        self.logger = Logger(label: "steward", sink: LogSink(minimumLevel: level, format: format))
    }

    /// Opens a connection to the configured database (password from `password_file` if set).
    func connect() throws -> Connection {
        guard let url = config.databaseURL else {
            throw ConfigError(file: config.sourceFile ?? "(no config file)", key: "[database] url",
                              message: "no database URL: pass --database-url, set STEWARD_DATABASE_URL, or set [database] url")
        }
        var target = try ConnectionString(url)
        if let passwordFile = config.databasePasswordFile {
            target = try target.with(password: try StewardConfig.readSecret(path: passwordFile, what: "database password file"))
        }
        logger.named("postgres").debug("connecting", [("target", target.description)])
        return try Connection(target, logger: logger, connectTimeoutSeconds: config.connectTimeoutSeconds)
    }

    /// The migration files from the configured folder.
    func migrationSource() throws -> MigrationSource {
        try MigrationSource(directory: config.migrationsDirectory)
    }
}

/// Runs a command and maps every error to its exit code and one clear message.
enum CommandRunner {
    static func run(_ command: any StewardCommand.Type, _ rawArguments: [String]) -> ExitCode {
        do {
            let arguments = try command.spec.parse(rawArguments)
            if arguments.flag("help") {
                Output.print(command.spec.help)
                return .ok
            }
            let context = try CommandContext(spec: command.spec, arguments: arguments)
            return try command.run(context)
        } catch let error as UsageError {
            Output.error(error.description)
            return .usage
        } catch let error as ConfigError {
            Output.error("config error: \(error)")
            return .config
        } catch let error as MigrationError {
            Output.error(error.description)
            switch error {
            case .drift, .adoptionRefused: return .drift
            case .database(let pg): return exitCode(for: pg)
            default: return .failure
            }
        } catch let error as PostgresError {
            Output.error(error.description + (error.hint.map { "\n  hint: \($0)" } ?? ""))
            return exitCode(for: error)
        } catch {
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

import BlockingExecutor
import CLI
import Config
import Fleet
import Migrations
import Postgres
import StewardLog

/// What every `fleet` command shares: the targets of the config, the plan of stages, the parallelism, and the
/// way one target's folder, connection and failure are worked out.
struct FleetSetup: Sendable {
    let plan: FleetPlan
    let parallel: Int
    let continueOnError: Bool
    let connectTimeoutSeconds: Int
    /// `--migrations` / `--include` as given (they beat every target's own folders), and the config's common ones.
    let migrationsFlag: String?
    let includeFlag: [String]?
    let commonDirectory: String
    let commonInclude: [String]
    let logger: Logger
    /// The threads the targets' blocking calls run on: one per target running at once.
    let executor: BlockingExecutor

    /// Options of the rollout commands.
    static let rolloutOptions: [CommandSpec.Option] = [
        .init("stage", value: "STAGE", help: "Only the targets of this stage (one of [fleet] stages)."),
        .init("parallel", value: "N", help: "At most N targets at once inside a stage (default 4, at most 64)."),
        .init("continue-on-error", help: "After a target fails, go on with the rest of its stage (the next stage still does not start)."),
    ]

    /// The targets' common options: the database ones but --database-url (each target has its own).
    static var commonOptions: [CommandSpec.Option] {
        CommandSpec.Option.databaseOptions.filter { $0.name != "database-url" }
    }

    init(_ context: CommandContext, command: String, defaultParallel: Int) throws {
        let targets = context.targets
        // A URL or password file that cannot work is the file's mistake: exit 78 before any target is touched,
        // rather than a row of one target while the others go on.
        _ = try FleetTarget.checkConnections(targets, credentialsAvailable: context.environment["CREDENTIALS_DIRECTORY"] != nil)
        do {
            plan = try FleetPlan(targets: targets, stageOrder: context.config[FleetConfig.stages], only: context.arguments.value("stage"))
        } catch {
            if case .noTargets(nil) = error {
                throw ConfigError(file: context.config.sourceFile ?? "(no config file)", key: "[target.NAME]", message: error.description)
            }
            throw UsageError(command: command, message: error.description)
        }
        var parallel = defaultParallel
        if let text = context.arguments.value("parallel") {
            guard let n = Int(text), (1...64).contains(n) else { throw UsageError(command: command, message: "--parallel takes a whole number from 1 to 64") }
            parallel = n
        }
        self.parallel = parallel
        continueOnError = context.arguments.flag("continue-on-error")
        connectTimeoutSeconds = context.config[DatabaseConfig.connectTimeout]
        migrationsFlag = context.arguments.value("migrations")
        includeFlag = context.arguments.value("include").map { $0.split(separator: ",").map(String.init) }
        commonDirectory = MigrationsConfig.folder(context.config)
        commonInclude = context.config[MigrationsConfig.include]
        logger = context.logger
        executor = BlockingExecutor(threads: parallel)
    }

    /// The target's migration files: `--migrations`/`--include` if given, else the target's own keys, else the common ones.
    func source(for target: FleetTarget) throws -> MigrationSource {
        try MigrationSource(directory: migrationsFlag ?? target.migrationsDirectory ?? commonDirectory,
                            include: includeFlag ?? target.include ?? commonInclude, deferParsing: true)
    }

    /// A logger whose lines name the target.
    func logger(_ label: String, _ target: FleetTarget) -> Logger {
        var logger = logger.named(label)
        logger.metadata.append(("target", target.name))
        return logger
    }

    /// Runs the rollout of `work` over the plan under `brake` (taken on by the command before it read the fleet, kept
    /// until its summary is written): once it is pulled no further target starts and the running ones finish, so the
    /// summary is still printed; a second pull cancels them.
    func rollout<Report: Sendable>(brake: RolloutBrake, work: @escaping @Sendable (FleetTarget) async -> (FleetRollout.Outcome, Report),
                                   progress: (FleetRunner.Progress) -> Void)
        async -> (results: [FleetRunner.Result<Report>], notStarted: [FleetTarget], interrupted: Bool) {
        let run = await FleetRunner.run(plan, parallel: parallel, continueOnError: continueOnError, stopRequested: { brake.isPulled },
                                        work: work, progress: progress)
        brake.rolloutEnded()
        return run
    }

    /// The line under a rollout's table that says why targets were left untouched and what to do; empty when none were.
    static func stopNote(notStarted: Int, interrupted: Bool, command: String) -> String {
        guard notStarted > 0 else { return "" }
        return interrupted
            ? "\ninterrupted: \(notStarted) target(s) not started; run steward \(command) again to go on (finished targets are no-ops)\n"
            : "\nthe rollout stopped after the failure above; fix it and run steward \(command) again (finished targets are no-ops)\n"
    }

    /// Runs `body` with a connection to `target` on one of the fleet's threads.
    func withConnection<T: Sendable>(_ target: FleetTarget, _ body: @escaping @Sendable (Connection, FleetTarget) throws -> T) async throws -> T {
        let string = try target.connectionString()
        let logger = logger("postgres", target)
        let timeout = connectTimeoutSeconds
        return try await executor.run {
            let connection = try Connection(string, logger: logger, connectTimeoutSeconds: timeout)
            return try body(connection, target)
        }
    }
}

/// Why a target's run failed, as the table and JSON tell it: unreachable or failed, the file if one failed, the
/// message (with any registered secret masked).
struct FleetFailure: Error, Sendable {
    let outcome: FleetRollout.Outcome
    let file: String?
    let message: String

    init(_ error: any Error) {
        var file: String?
        var outcome = FleetRollout.Outcome.failed
        let message: String
        switch error {
        case let error as MigrationError:
            message = error.description
            switch error {
            case .statementFailed(let failed, _, let pg, _):
                file = failed
                if pg.kind == .connectionLost { outcome = .unreachable }
            case .invalidFile(let bad, _, _): file = bad
            case .database(let pg): if Self.unreachable(pg) { outcome = .unreachable }
            default: break
            }
        case let error as PostgresError:
            message = error.description
            if Self.unreachable(error) { outcome = .unreachable }
        case let error as ConfigError:
            message = "config error: \(error)"
        default:
            message = "\(error)"
        }
        self.outcome = outcome
        self.file = file
        self.message = SecretRedactor.redact(message)
    }

    static func unreachable(_ error: PostgresError) -> Bool { error.kind == .connectionFailed || error.kind == .connectionLost }

    /// The first line of the message, for the table (the JSON has it whole).
    var headline: String { String(message.split(separator: "\n", omittingEmptySubsequences: true).first ?? "") }
}

extension FleetRollout.Outcome {
    /// The exit code of a rollout: 1 when a target failed, else 69 when one was unreachable, else 0.
    /// (A failure says 1 even when an interrupt followed; an interrupt that left targets untouched, 130.)
    static func exitCode(_ outcomes: [FleetRollout.Outcome], interrupted: Bool) -> ExitCode {
        if outcomes.contains(.failed) { return .failure }
        if interrupted { return .interrupted }
        if outcomes.contains(.unreachable) { return .unavailable }
        return .ok
    }
}

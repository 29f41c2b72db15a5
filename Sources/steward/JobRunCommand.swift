import OutputText
import StewardJSON
import CLI
import FoundationEssentials
import Glibc
import Daemon
import Config
import Jobs
import StewardLog
import Migrations
import Postgres

/// `steward job run <name>`: runs one job once, now, outside the daemon (with the same lock and history).
enum JobRunCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "job run",
        abstract: "Run one job now and print what it did.",
        discussion: """
        Uses the job's settings from --config, takes the job's cluster-wide lock (so it never overlaps a
        scheduled run), and records the run in steward.job_runs (trigger manual). Exits 0 when it succeeded
        (whatever it found), 1 when it failed, 75 when another run of the job holds the lock, and with
        --fail-on-findings 2 when it found something new.

        Jobs: \(JobCatalog.steward.all.map { "\($0.name) (\($0.abstract))" }.joined(separator: "; "))

        Example: steward job run prune-history --dry-run
        """,
        positionals: "<job>",
        options: CommandSpec.Option.databaseOptions + [
            .init("dry-run", help: "Change nothing; report what would change."),
            .init("fail-on-findings", help: "Exit 2 when the run found something new (username-check: new findings)."),
            .init("force", help: "Go past the job's safety brake (orphan-avatars: max_fraction, max_per_run)."),
            .init("storage-url", value: "URL", help: "The project URL or its /storage/v1 URL (default [storage] url)."),
            .init("service-key-file", value: "FILE", help: "File holding the service key (default [storage] service_key_file)."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        guard context.arguments.positionals.count == 1, let name = context.arguments.positionals.first else {
            throw UsageError(command: spec.name, message: "name one job (known: \(JobCatalog.steward.all.map { $0.name }.joined(separator: ", ")))")
        }
        let settings = try context.daemonSettings()
        guard let configured = settings.jobs.first(where: { $0.settings.name == name }) else {
            throw UsageError(command: spec.name, message: "no job \(name) (known: \(JobCatalog.steward.all.map { $0.name }.joined(separator: ", ")))")
        }
        let dryRun = context.arguments.flag("dry-run")
        let outcome = try await execute(configured, settings: settings, target: try context.connectionTarget(), dryRun: dryRun,
                                        force: context.arguments.flag("force"), logger: context.logger,
                                        progressLine: ProgressLine.standardErrorIsTerminal)
        if context.json {
            Output.print(JSON.object([
                ("job", .string(name)), ("status", .string(outcome.status.rawValue)), ("dry_run", .bool(dryRun)),
                ("run_id", outcome.runID.map { .number(Double($0)) } ?? .null), ("seconds", .number((outcome.seconds * 1000).rounded() / 1000)),
                ("summary", outcome.summary?.json ?? .null), ("error", .optional(outcome.reason)),
            ]).rendered)
        } else {
            var text = "\(name): \(outcome.status.rawValue)\(dryRun ? " (dry run)" : "") in \(String(fixed: outcome.seconds, digits: 2)) s"
            if let summary = outcome.summary { text += "\n  " + summary.counts.map { "\($0.0): \($0.1)" }.joined(separator: "\n  ") }
            if let reason = outcome.reason { text += "\n  \(reason)" }
            Output.print(text)
        }
        switch outcome.status {
        case .succeeded:
            let fresh = (outcome.summary?["new"] ?? 0) + (outcome.summary?["would_be_new"] ?? 0)
            return context.arguments.flag("fail-on-findings") && fresh > 0 ? .drift : .ok
        case .failed: return .failure
        case .skipped: return .temporaryFailure
        }
    }

    /// One manual run of `configured` against `target`, with the job's lock and history (shared with `fleet job run`).
    /// `progressLine`: draw the live line on standard error while it runs.
    static func execute(_ configured: JobCatalog.Configured, settings: DaemonSettings, target: ConnectionString, dryRun: Bool, force: Bool,
                        logger: Logger, progressLine: Bool) async throws -> JobRunner.Outcome {
        let name = configured.settings.name
        let session = DatabaseSession(target, label: "job", logger: logger.named("postgres"),
                                      connectTimeoutSeconds: settings.config[DatabaseConfig.connectTimeout], settings: JobSessionLimits.settings)
        try await session.run { c in
            try c.requireSessionState()
            try HistoryStore(connection: c).prepareLocked(logger: logger.named("migrations"))
        }
        let runner = JobRunner(session: session, host: settings.host, pid: Int(getpid()), logger: logger.named("jobs"),
                               progressIntervalSeconds: settings.config[JobsConfig.progressInterval])
        let progress = JobProgress()
        // On a terminal, a live line shows the run's phase and progress on standard error; none otherwise.
        let outcome = await ProgressLine(job: name, progress: progress, logger: logger)
            .drawing(enabled: progressLine) {
                await runner.execute(configured.job, settings: configured.settings, scheduledFor: nil, trigger: .manual, dryRun: dryRun,
                                     force: force, progress: progress)
            }
        await session.reset()
        return outcome
    }
}

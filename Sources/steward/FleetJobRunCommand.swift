import CLI
import Fleet
import Jobs
import OutputText
import StewardJSON

/// `steward fleet job run <job>`: one job run at every target, stage by stage, at most --parallel at once.
enum FleetJobRunCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "fleet job run",
        abstract: "Run one job now at every target, stage by stage.",
        discussion: """
        Runs the job as steward job run does at each [target.NAME] of --config (the job's settings from the
        [job.NAME] sections, its cluster-wide lock and history at each target), with the stage and --parallel
        rules of fleet migrate: a failed run stops the rollout before the next stage, and before the rest of its
        stage without --continue-on-error. A target where another run holds the job's lock is skipped, not a
        failure. Exits 0 when every run succeeded (or was skipped), 1 when one failed, 69 when none failed but some
        targets could not be reached. Ctrl-C (or SIGTERM) starts no further target, lets the running runs finish
        and prints the table (exit 130); a second cancels them (each job's own brake and history hold as for a
        killed steward job run). A job that deletes through the Storage API (orphan-avatars) uses each target's
        own storage_url and service_key_file, never [storage]; a target without them is refused (exit 78) before
        any target is touched.
        """,
        positionals: "<job>",
        options: FleetSetup.commonOptions + FleetSetup.rolloutOptions + [
            .init("dry-run", help: "Change nothing; report what would change."),
        ])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        guard context.arguments.positionals.count == 1, let name = context.arguments.positionals.first else {
            throw UsageError(command: spec.name, message: "name one job (known: \(JobCatalog.steward.all.map { $0.name }.joined(separator: ", ")))")
        }
        // On before the fleet is read, off once the summary is written (see RolloutBrake).
        let brake = RolloutBrake(command: spec.name)
        defer { brake.release() }
        let fleet = try FleetSetup(context, command: spec.name, defaultParallel: 4)
        let settings = try context.daemonSettings()
        guard let configured = settings.jobs.first(where: { $0.settings.name == name }) else {
            throw UsageError(command: spec.name, message: "no job \(name) (known: \(JobCatalog.steward.all.map { $0.name }.joined(separator: ", ")))")
        }
        let dryRun = context.arguments.flag("dry-run")
        // A job that deletes through Storage works through each target's own, never [storage]'s: one URL for a fleet
        // whose staging was restored from production deletes production's objects for staging's orphans. A target
        // without its own is the file's mistake, refused (exit 78) before any target is touched.
        var storages: [String: (url: String, keyFile: String)]? = nil
        if configured.job is any StorageJob {
            storages = try Dictionary(uniqueKeysWithValues: fleet.plan.targets.map { ($0.name, try $0.storage()) })
        }
        let run = await fleet.rollout(brake: brake, work: { [storages] target -> (FleetRollout.Outcome, Result<JobRunner.Outcome, FleetFailure>) in
            do {
                var configured = configured
                if let storage = storages?[target.name], let job = configured.job as? any StorageJob {
                    configured = configured.replacing(job: job.using(storageURL: storage.url, serviceKeyFile: storage.keyFile))
                }
                let outcome = try await JobRunCommand.execute(configured, settings: settings, target: try target.connectionString(), dryRun: dryRun,
                                                              force: false, logger: fleet.logger("fleet", target), progressLine: false)
                return (outcome.status == .failed ? .failed : .succeeded, Result<JobRunner.Outcome, FleetFailure>.success(outcome))
            } catch {
                let failure = FleetFailure(error)
                return (failure.outcome, .failure(failure))
            }
        }, progress: { Output.error($0.line) })

        if context.json {
            var rows: [JSON] = run.results.map { r in
                switch r.report {
                case .success(let outcome):
                    return .object([("name", .string(r.target.name)), ("stage", .string(r.target.stageName)), ("result", .string(outcome.status.rawValue)),
                                    ("run_id", outcome.runID.map { .number(Double($0)) } ?? .null), ("summary", outcome.summary?.json ?? .null),
                                    ("error", .optional(outcome.reason))])
                case .failure(let failure):
                    return .object([("name", .string(r.target.name)), ("stage", .string(r.target.stageName)),
                                    ("result", .string((failure.outcome == .unreachable ? FleetResult.unreachable : .failed).rawValue)),
                                    ("error", .string(failure.message))])
                }
            }
            rows += run.notStarted.map { .object([("name", .string($0.name)), ("stage", .string($0.stageName)), ("result", .string(FleetResult.notStarted.rawValue))]) }
            Output.print(JSON.object([("job", .string(name)), ("dry_run", .bool(dryRun)), ("targets", .array(rows)),
                                      ("not_started", .strings(run.notStarted.map(\.name))), ("interrupted", .bool(run.interrupted))]).rendered)
        } else {
            var table = FleetTable(columns: ["TARGET", "STAGE", "RESULT", "SUMMARY"])
            for r in run.results {
                switch r.report {
                case .success(let outcome):
                    let summary = outcome.summary.map { $0.counts.map { "\($0.0): \($0.1)" }.joined(separator: ", ") } ?? outcome.reason ?? "-"
                    table.add([r.target.name, r.target.stageName, outcome.status.rawValue, summary])
                case .failure(let failure):
                    table.add([r.target.name, r.target.stageName, (failure.outcome == .unreachable ? FleetResult.unreachable : .failed).rawValue, failure.headline])
                }
            }
            for target in run.notStarted { table.add([target.name, target.stageName, FleetResult.notStarted.rawValue, "left untouched"]) }
            Output.print("\(name)\(dryRun ? " (dry run)" : "")\n" + table.text
                         + FleetSetup.stopNote(notStarted: run.notStarted.count, interrupted: run.interrupted, command: spec.name))
        }
        return FleetRollout.Outcome.exitCode(run.results.map(\.outcome), interrupted: run.interrupted)
    }
}

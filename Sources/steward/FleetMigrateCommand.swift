import CLI
import Fleet
import Migrations
import OutputText
import StewardJSON
import Synchronization

/// `steward fleet migrate`: the pending files of every target, stage by stage, at most --parallel at once.
enum FleetMigrateCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "fleet migrate",
        abstract: "Apply pending migrations to every target, stage by stage (canary first).",
        discussion: """
        The targets are the [target.NAME] sections of --config; their stages run in the order [fleet] stages lists
        them (targets without a stage last, in stage default). Inside a stage at most --parallel targets run at once,
        each exactly as steward migrate runs it: its own connection, migration lock, lint gate, lock slices and
        retries. A failing target stops the rollout: no further target of its stage starts (unless
        --continue-on-error) and the next stage never starts; the targets not reached are left untouched and listed
        as not-started. A rerun resumes: applied files are no-ops, so finished targets report up-to-date.
        Progress (targets done of the total, failures so far) goes to standard error as each target finishes; the
        table at the end (or --json) names each target's result, the failing file and the error.

        Exits 0 when every target is applied or up to date, 1 when a target failed (named in the table), 69 when
        none failed but some could not be reached (or refused the password).

        Ctrl-C (or SIGTERM) starts no further target: the running ones finish and the table follows (exit 130, or 1
        if a target failed); a second Ctrl-C cancels them at once (their open transactions roll back).

        Examples:
          steward fleet migrate --config /etc/steward/fleet.ini --dry-run
          steward fleet migrate --config /etc/steward/fleet.ini --stage canary
          steward fleet migrate --config /etc/steward/fleet.ini --parallel 8 --continue-on-error
        """,
        options: FleetSetup.commonOptions + FleetSetup.rolloutOptions + [
            .init("dry-run", help: "Show what each target would apply; change nothing."),
            .init("allow-out-of-order", help: "Apply pending files older than the newest applied one."),
            .init("lock-wait", value: "SECONDS", help: "How long to wait for another migrator's lock at each target (default 60)."),
            .init("lock-retry-budget", value: "SECONDS", help: "How long one file may keep retrying its lock slices (default [migrations] lock_retry_budget, 120)."),
        ])

    /// What one target's migrate reports.
    struct TargetReport: Sendable {
        var applied: [String] = []
        var alreadyApplied = 0
        var planned: [String] = []
        var dryRun = false
        var failure: FleetFailure?
    }

    static func run(_ context: CommandContext) async throws -> ExitCode {
        // On before the fleet is read, off once the summary is written (see RolloutBrake).
        let brake = RolloutBrake(command: spec.name)
        defer { brake.release() }
        let fleet = try FleetSetup(context, command: spec.name, defaultParallel: 4)
        let options = try MigrateCommand.migratorOptions(context, command: spec.name)
        let run = await fleet.rollout(brake: brake, work: { target -> (FleetRollout.Outcome, TargetReport) in
            // The files applied before a failure stay applied (each commits with its history row): the row says so.
            let appliedSoFar = Mutex<[String]>([])
            do {
                let source = try fleet.source(for: target)
                let logger = fleet.logger("migrations", target)
                let report = try await fleet.withConnection(target) { connection, _ in
                    try Migrator(connection: connection, source: source, logger: logger)
                        .migrate(options: options, onApplied: { file in appliedSoFar.withLock { $0.append(file) } })
                }
                return (.succeeded, TargetReport(applied: report.applied.map(\.file), alreadyApplied: report.alreadyApplied,
                                                 planned: report.plan.map(\.fileName), dryRun: report.dryRun))
            } catch {
                let failure = FleetFailure(error)
                return (failure.outcome, TargetReport(applied: appliedSoFar.withLock { $0 }, failure: failure))
            }
        }, progress: { Output.error($0.line) })

        func result(_ report: TargetReport) -> FleetResult {
            if let failure = report.failure { return failure.outcome == .unreachable ? .unreachable : .failed }
            if report.dryRun { return .dryRun }
            return report.applied.isEmpty ? .upToDate : .applied
        }
        let failed = run.results.filter { $0.outcome != .succeeded }
        if context.json {
            var rows: [JSON] = run.results.map { r in
                // A failed target's count of files applied before this run is not known (null), its `applied` is.
                .object([("name", .string(r.target.name)), ("stage", .string(r.target.stageName)), ("result", .string(result(r.report).rawValue)),
                         ("applied", .strings(r.report.applied)),
                         ("already_applied", r.report.failure == nil ? .number(Double(r.report.alreadyApplied)) : .null),
                         ("would_apply", .strings(r.report.planned)), ("file", .optional(r.report.failure?.file)),
                         ("error", .optional(r.report.failure?.message)), ("seconds", .number((r.seconds * 1000).rounded() / 1000))])
            }
            // The same fields on every row, so a script reads `file` or `applied` of any target without a KeyError.
            rows += run.notStarted.map { t in
                .object([("name", .string(t.name)), ("stage", .string(t.stageName)), ("result", .string(FleetResult.notStarted.rawValue)),
                         ("applied", .strings([])), ("already_applied", .number(0)), ("would_apply", .strings([])),
                         ("file", .null), ("error", .null), ("seconds", .number(0))])
            }
            Output.print(JSON.object([
                ("targets", .array(rows)),
                ("failed", .strings(failed.filter { $0.outcome == .failed }.map(\.target.name))),
                ("unreachable", .strings(failed.filter { $0.outcome == .unreachable }.map(\.target.name))),
                ("not_started", .strings(run.notStarted.map(\.name))),
                ("interrupted", .bool(run.interrupted)),
                ("dry_run", .bool(options.dryRun)),
            ]).rendered)
        } else {
            var table = FleetTable(columns: ["TARGET", "STAGE", "RESULT", "APPLIED", "FILE", "DETAIL"])
            for r in run.results {
                let report = r.report
                let count = report.dryRun ? "\(report.planned.count) to apply"
                    : report.failure == nil ? "\(report.applied.count) (+\(report.alreadyApplied) before)" : "\(report.applied.count)"
                table.add([r.target.name, r.target.stageName, result(report).rawValue, count,
                           report.failure?.file ?? "-", report.failure?.headline ?? "\(String(fixed: r.seconds, digits: 2)) s"])
            }
            for target in run.notStarted { table.add([target.name, target.stageName, FleetResult.notStarted.rawValue, "-", "-", "left untouched"]) }
            var text = table.text + "\n"
            let ok = run.results.count - failed.count
            let unreachable = failed.count { $0.outcome == .unreachable }
            text += "\(ok) of \(fleet.plan.targets.count) target(s) \(options.dryRun ? "checked (dry run)" : "done"), \(failed.count - unreachable) failed, "
                + "\(unreachable) unreachable, \(run.notStarted.count) not started\n"
            for r in failed {
                text += "\n\(r.outcome == .unreachable ? "unreachable" : "failed"): \(r.target.name)" + (r.report.failure?.file.map { " (\($0))" } ?? "")
                    + (r.report.applied.isEmpty ? "" : " after applying " + r.report.applied.joined(separator: ", ")) + "\n  "
                    + (r.report.failure?.message ?? "").replacing("\n", with: "\n  ") + "\n"
            }
            text += FleetSetup.stopNote(notStarted: run.notStarted.count, interrupted: run.interrupted, command: spec.name)
            Output.print(text)
        }
        return FleetRollout.Outcome.exitCode(run.results.map(\.outcome), interrupted: run.interrupted)
    }
}

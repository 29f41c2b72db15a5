import CLI
import Fleet
import Migrations
import OutputText
import StewardJSON

/// `steward fleet verify`: steward verify at every target, stage by stage, at most --parallel at once.
enum FleetVerifyCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "fleet verify",
        abstract: "Check every target still matches its applied migrations.",
        discussion: """
        Runs steward verify at each [target.NAME] of --config, with the stage and --parallel rules of fleet migrate:
        a target that cannot be verified (unreachable, an error) stops the rollout before the next stage, and before
        the rest of its stage without --continue-on-error. Drift is a finding, not a stop: every target of the stage
        is compared. One row per target (or --json). Exits 0 when every target matches, 2 when some drift,
        1 when one could not be verified, 69 when none failed but some could not be reached. Ctrl-C (or SIGTERM)
        starts no further target, lets the running ones finish and prints the table (exit 130); a second cancels.
        """,
        options: FleetSetup.commonOptions + FleetSetup.rolloutOptions + [.shadowURL])

    static func run(_ context: CommandContext) async throws -> ExitCode {
        // On before the fleet is read, off once the summary is written (see RolloutBrake).
        let brake = RolloutBrake(command: spec.name)
        defer { brake.release() }
        let fleet = try FleetSetup(context, command: spec.name, defaultParallel: 4)
        let shadowServer = try context.shadowServer()
        let supabaseHistory = MigrationsConfig.historyMode(context.config)
        let run = await fleet.rollout(brake: brake, work: { target -> (FleetRollout.Outcome, Result<Verifier.Report, FleetFailure>) in
            do {
                let source = try fleet.source(for: target).parsedWhereValid().source
                let logger = fleet.logger("verify", target)
                let report = try await fleet.withConnection(target) { connection, _ in
                    try VerifyCommand.verify(connection, source: source, shadowServer: shadowServer, supabaseHistory: supabaseHistory, logger: logger)
                }
                return (.succeeded, Result<Verifier.Report, FleetFailure>.success(report))
            } catch {
                let failure = FleetFailure(error)
                return (failure.outcome, .failure(failure))
            }
        }, progress: { Output.error($0.line) })

        var drifted = false
        if context.json {
            var rows: [JSON] = run.results.map { r in
                switch r.report {
                case .success(let report):
                    if !report.differences.isEmpty { drifted = true }
                    return .object([("name", .string(r.target.name)), ("stage", .string(r.target.stageName)),
                                    ("result", .string((report.differences.isEmpty ? FleetResult.ok : .drift).rawValue)),
                                    ("checked_files", .number(Double(report.checkedFiles))), ("differences", .strings(report.differences))])
                case .failure(let failure):
                    return .object([("name", .string(r.target.name)), ("stage", .string(r.target.stageName)),
                                    ("result", .string((failure.outcome == .unreachable ? FleetResult.unreachable : .failed).rawValue)),
                                    ("error", .string(failure.message))])
                }
            }
            rows += run.notStarted.map { .object([("name", .string($0.name)), ("stage", .string($0.stageName)), ("result", .string(FleetResult.notStarted.rawValue))]) }
            Output.print(JSON.object([("targets", .array(rows)), ("not_started", .strings(run.notStarted.map(\.name))),
                                      ("interrupted", .bool(run.interrupted))]).rendered)
        } else {
            var table = FleetTable(columns: ["TARGET", "STAGE", "RESULT", "CHECKED", "DETAIL"])
            var details = ""
            for r in run.results {
                switch r.report {
                case .success(let report):
                    if !report.differences.isEmpty {
                        drifted = true
                        details += "\n\(r.target.name): \(report.differences.count) difference(s):\n" + report.differences.map { "  - \(LogText.escaped($0))\n" }.joined()
                    }
                    table.add([r.target.name, r.target.stageName, (report.differences.isEmpty ? FleetResult.ok : .drift).rawValue,
                               "\(report.checkedFiles)", report.differences.first ?? "-"])
                case .failure(let failure):
                    table.add([r.target.name, r.target.stageName, (failure.outcome == .unreachable ? FleetResult.unreachable : .failed).rawValue,
                               "-", failure.headline])
                }
            }
            for target in run.notStarted { table.add([target.name, target.stageName, FleetResult.notStarted.rawValue, "-", "left untouched"]) }
            Output.print(table.text + details + FleetSetup.stopNote(notStarted: run.notStarted.count, interrupted: run.interrupted, command: spec.name))
        }
        let code = FleetRollout.Outcome.exitCode(run.results.map(\.outcome), interrupted: run.interrupted)
        return code == .ok && drifted ? .drift : code
    }
}

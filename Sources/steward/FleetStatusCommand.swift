import CLI
import Fleet
import Migrations
import OutputText
import StewardJSON
import Postgres
import StewardLog

/// `steward fleet status`: one row per target: reachable, migrations, drift, jobs, leader.
enum FleetStatusCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "fleet status",
        abstract: "One row per target: reachable, applied/pending/blocked, drift, jobs, leader.",
        discussion: """
        Reads every [target.NAME] of --config at once, at most --parallel (default 16) at a time, one connection
        each, read-only: nothing is created and no lock is taken. A row tells whether the target answered (with
        the reason when not, never a password), how many migration files are applied, pending and blocked (changed
        or missing after being applied, out of order, or refused by migrate as they are), the drift verify finds in
        what is recorded (applied files without a record are left to steward verify), each job's last result and
        the leading daemon. An unreachable target is a row, not a failure of the command.

        Exits 0 when every target is up to date and clean, 2 when some target has pending files, blocked files or
        drift, 69 when some target could not be reached (all of them are listed).
        """,
        options: FleetSetup.commonOptions + [
            .init("stage", value: "STAGE", help: "Only the targets of this stage."),
            .init("parallel", value: "N", help: "Read at most N targets at once (default 16, at most 64)."),
        ])

    /// What one target answered.
    struct Row: Sendable {
        var applied = 0
        var pending = 0
        var blocked = 0
        var problems: [String] = []
        var differences: [String] = []
        var jobs: [(name: String, last: String)] = []
        var leader: String?
    }

    static func run(_ context: CommandContext) async throws -> ExitCode {
        let fleet = try FleetSetup(context, command: spec.name, defaultParallel: 16)
        var options = Migrator.Options()
        options.supabaseHistory = MigrationsConfig.historyMode(context.config)
        let statusOptions = options
        // A read never stops the others: every target is read and gets its row.
        let run = await FleetRunner.run(fleet.plan, parallel: fleet.parallel, continueOnError: true, work: { target -> (FleetRollout.Outcome, Result<Row, FleetFailure>) in
            do {
                let (source, invalid) = try fleet.source(for: target).parsedWhereValid()
                let logger = fleet.logger("status", target)
                let row = try await fleet.withConnection(target) { connection, _ in
                    try read(connection, source: source, invalid: invalid, options: statusOptions, logger: logger)
                }
                return (.succeeded, Result<Row, FleetFailure>.success(row))
            } catch {
                // The failure is the row's, not the rollout's: the next stage is read too.
                return (.succeeded, .failure(FleetFailure(error)))
            }
        })

        var unreachable = 0
        var unclean = 0
        if context.json {
            let rows: [JSON] = run.results.map { r in
                var fields: [(String, JSON)] = [("name", .string(r.target.name)), ("stage", .string(r.target.stageName))]
                switch r.report {
                case .success(let row):
                    if row.pending + row.blocked + row.differences.count > 0 { unclean += 1 }
                    fields += [("reachable", .bool(true)), ("up_to_date", .bool(row.pending + row.blocked + row.differences.count == 0)),
                               ("applied", .number(Double(row.applied))), ("pending", .number(Double(row.pending))),
                               ("blocked", .number(Double(row.blocked))), ("problems", .strings(row.problems)),
                               ("drift", .number(Double(row.differences.count))), ("differences", .strings(row.differences)),
                               ("jobs", .array(row.jobs.map { .object([("name", .string($0.name)), ("last_status", .string($0.last))]) })),
                               ("leader", .optional(row.leader))]
                case .failure(let failure):
                    if failure.outcome == .unreachable { unreachable += 1 } else { unclean += 1 }
                    fields += [("reachable", .bool(failure.outcome != .unreachable)), ("up_to_date", .bool(false)), ("error", .string(failure.message))]
                }
                return .object(fields)
            }
            Output.print(JSON.object([("targets", .array(rows))]).rendered)
        } else {
            var table = FleetTable(columns: ["TARGET", "STAGE", "REACHABLE", "APPLIED", "PENDING", "BLOCKED", "DRIFT", "JOBS (LAST)", "LEADER"])
            var details = ""
            for r in run.results {
                switch r.report {
                case .success(let row):
                    if row.pending + row.blocked + row.differences.count > 0 { unclean += 1 }
                    let jobs = row.jobs.isEmpty ? "-" : row.jobs.map { "\($0.name)=\($0.last)" }.joined(separator: " ")
                    table.add([r.target.name, r.target.stageName, "yes", "\(row.applied)", "\(row.pending)", "\(row.blocked)",
                               "\(row.differences.count)", jobs, row.leader ?? "-"])
                    let lines = row.problems + row.differences
                    if !lines.isEmpty { details += "\n\(r.target.name):\n" + lines.map { "  - \(LogText.escaped($0))\n" }.joined() }
                case .failure(let failure):
                    if failure.outcome == .unreachable { unreachable += 1 } else { unclean += 1 }
                    table.add([r.target.name, r.target.stageName, failure.outcome == .unreachable ? "no" : "error", "-", "-", "-", "-", "-", "-"])
                    details += "\n\(r.target.name): \(LogText.escaped(failure.headline))\n"
                }
            }
            let clean = run.results.count - unreachable - unclean
            Output.print(table.text + details + "\n\(clean) of \(run.results.count) target(s) up to date and clean, \(unclean) not, \(unreachable) unreachable\n")
        }
        if unreachable > 0 { return .unavailable }
        return unclean > 0 ? .drift : .ok
    }

    /// The row of one target, from its open connection: the migration status, the recorded drift, the jobs and the
    /// leader (a handful of queries, nothing written).
    static func read(_ connection: Connection, source: MigrationSource, invalid: [String], options: Migrator.Options,
                     logger: Logger) throws -> Row {
        var row = Row()
        let status = try Migrator(connection: connection, source: source, logger: logger).status(options: options)
        row.applied = status.items.count { $0.state == MigrationStatus.State.applied }
        row.pending = status.pending.count
        row.problems = status.problems + invalid.map { "migrate refuses: \($0)" }
        // Changed and missing files, files migrate refuses, and a history problem that is neither (out of order).
        let broken = status.items.count { $0.state == MigrationStatus.State.changed || $0.state == MigrationStatus.State.missing }
        row.blocked = broken + invalid.count + (status.problems.isEmpty || broken > 0 ? 0 : 1)
        if row.applied > 0 {
            var verifier = Verifier(connection: connection, source: source, logger: logger)
            verifier.buildsMissingRecords = false
            // The history's own problems are counted as blocked above, not again as drift.
            row.differences = try verifier.verify().differences.filter { !status.problems.contains($0) }
        }
        if let overview = try JobOverview.read(connection, settings: nil) {
            row.jobs = overview.jobs.map { ($0.name, $0.lastStatus ?? "-") }
            row.leader = overview.leader.map { "\($0.host) pid \($0.pid)" + ($0.holding ? "" : " (not holding)") }
        }
        return row
    }
}

import CLI
import Config
import Daemon
import StewardLog
import Migrations
import OutputText
import StewardJSON

/// `steward status`: applied, pending, changed and missing migrations, file by file.
enum StatusCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "Show migrations (applied, pending, changed, missing), jobs and the leader.",
        discussion: """
        Read-only: creates nothing and takes no lock. Exits 0 when the files and the history agree
        (pending files are fine), 2 when a file changed after it was applied, an applied file is missing,
        or a pending file is older than the newest applied one. With a daemon's history in the database it
        also shows which instance leads and each job's last run, last success and (from --config) next run.
        A file migrate refuses as it is (one that controls its own transaction) is listed with the reason.
        """,
        options: CommandSpec.Option.databaseOptions)

    static func run(_ context: CommandContext) throws -> ExitCode {
        // A file migrate would refuse is shown, not a reason to refuse showing the state.
        let (source, invalid) = try context.migrationSource(deferParsing: true).parsedWhereValid()
        let connection = try context.connect()
        var options = Migrator.Options()
        options.supabaseHistory = MigrationsConfig.historyMode(context.config)
        let migrator = Migrator(connection: connection, source: source, logger: context.logger)
        let status = try migrator.status(options: options)
        let keepsCLI = try migrator.keepsCLIHistory(options)
        let jobs = try JobOverview.read(connection, settings: try? context.daemonSettings(),
                                        progress: DaemonProgress.read(socket: context.config[DaemonConfig.controlSocket]))
        if context.json {
            Output.print(JSON.object([
                ("migrations", .array(status.items.map { item in
                    .object([("version", .string(item.version)), ("name", .string(item.name)), ("state", .string(item.state.rawValue)),
                             ("applied_at", .optional(item.appliedAt)), ("notes", .strings(item.notes)),
                             ("recorded_checksum", .optional(item.recordedChecksum)), ("file_checksum", .optional(item.fileChecksum)),
                             ("steward_history", .string(item.stewardHistory)), ("supabase_history", .string(item.supabaseHistory))])
                })),
                ("pending", .number(Double(status.pending.count))),
                ("problems", .strings(status.problems)),
                ("warnings", .strings(status.warnings)),
                ("supabase_history", .string(keepsCLI ? "on" : "off")),
                ("history_drift", .strings(status.historyDrift)),
                ("invalid_files", .strings(invalid)),
                ("leader", jobs?.leaderJSON ?? .null),
                ("jobs", jobs?.jobsJSON ?? .array([])),
                ("alerts", jobs?.alertsJSON ?? .array([])),
            ]).rendered)
        } else {
            var text = "database \(connection.target)\nmigrations \(source.directory)\n\n"
            let width = max(9, (status.items.map(\.version.count).max() ?? 0) + 2)
            text += "STATE     " + "VERSION".padding(width) + "NAME                          APPLIED AT            "
                + (keepsCLI ? "SUPABASE CLI  " : "") + "NOTES\n"
            for item in status.items {
                text += item.state.rawValue.padding(10) + item.version.padding(width) + item.name.padding(30)
                    + (item.appliedAt ?? "-").padding(22) + (keepsCLI ? item.supabaseHistory.padding(14) : "")
                    + item.notes.joined(separator: "; ") + "\n"
            }
            let applied = status.items.filter { $0.state == .applied }.count
            text += "\n\(applied) applied, \(status.pending.count) pending"
            if keepsCLI { text += ", Supabase CLI history kept too" }
            text += status.problems.isEmpty ? "\n" : "\n\nproblems:\n" + status.problems.map { "  - \($0)\n" }.joined()
            if !invalid.isEmpty {
                text += "\nfiles migrate refuses as they are:\n" + invalid.map { "  - \(LogText.escaped($0))\n" }.joined()
            }
            if !status.historyDrift.isEmpty {
                text += "\nthe two histories disagree:\n" + status.historyDrift.map { "  - \($0)\n" }.joined()
            }
            if let jobs { text += "\n" + jobs.text }
            Output.print(text)
        }
        return status.problems.isEmpty ? .ok : .drift
    }
}

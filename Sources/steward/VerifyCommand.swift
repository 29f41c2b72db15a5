import CLI
import Config
import StewardLog
import Migrations
import SupabaseProject
import OutputText
import Postgres
import StewardJSON

/// `steward verify`: checks the live database still matches the applied migrations.
enum VerifyCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "verify",
        abstract: "Check the live database still matches the applied migrations.",
        discussion: """
        Drift is a change since the files were applied. migrate records, in each file's own transaction, the
        catalog state of everything the file created or changed (tables, columns, constraints, indexes, views,
        sequences, types, functions and procedures, triggers, row level security, policies, grants, default
        privileges, comments, extensions, publications, buckets); verify compares the live catalog with the latest
        recorded state of each and lists every difference, exit 2. Rights narrower than the files give (a
        hardening revoke) are listed as stricter than the migrations, exit 0. Data statements are not schema and
        never drift. Files applied without a record (by hand, by the Supabase CLI, by an older Steward) are first
        applied to a scratch shadow database on the same server (or --shadow-url), once; the result is recorded.
        Nothing runs in the live database but catalog reads and Steward's own bookkeeping. Tables of files not yet
        applied that already exist (pasted by hand) are a difference, pointing at migrate --adopt. Also reports
        the quickstart's known weaknesses as advice, without failing. A file migrate refuses as it is (one that
        controls its own transaction) is listed as not compared, not a failure.
        """,
        options: CommandSpec.Option.databaseOptions + [.shadowURL])

    static func run(_ context: CommandContext) throws -> ExitCode {
        // A file migrate would refuse is shown, not a reason to refuse the whole check.
        let (source, invalid) = try context.migrationSource(deferParsing: true).parsedWhereValid()
        let connection = try context.connect()
        let report = try verify(connection, source: source, shadowServer: try context.shadowServer(),
                                supabaseHistory: MigrationsConfig.historyMode(context.config), logger: context.logger)
        if context.json {
            Output.print(JSON.object([
                ("ok", .bool(report.differences.isEmpty)),
                ("checked_files", .number(Double(report.checkedFiles))),
                ("differences", .strings(report.differences)),
                ("stricter", .strings(report.stricter)),
                ("advisories", .strings(report.advisories)),
                ("enforcement", .strings(report.enforcement)),
                ("not_compared", .strings(invalid + report.notCompared)),
                ("notes", .strings(report.notes)),
            ]).rendered)
        } else {
            var text = report.differences.isEmpty
                ? "ok: the database matches the \(report.checkedFiles) applied migration(s)\n"
                : "\(report.differences.count) difference(s) between the database and the applied migrations:\n"
                    + report.differences.map { "  - \($0)\n" }.joined()
            for note in report.notes { text += "note: \(note)\n" }
            if !report.stricter.isEmpty {
                text += "\nstricter than the migrations (rights narrowed since, not a failure):\n" + report.stricter.map { "  - \($0)\n" }.joined()
            }
            if !invalid.isEmpty {
                text += "\nnot compared (migrate refuses these files as they are):\n" + invalid.map { "  - \(LogText.escaped($0))\n" }.joined()
            }
            if !report.notCompared.isEmpty {
                text += "\nnot compared (information, not drift):\n"
                    + report.notCompared.map { "  - \(LogText.escaped($0))\n" }.joined()
            }
            if !report.advisories.isEmpty {
                text += "\nadvice (known weaknesses of the quickstart schema, not failures):\n" + report.advisories.map { "  - \($0)\n" }.joined()
            }
            if !report.enforcement.isEmpty {
                text += "\nenforcement:\n" + report.enforcement.map { "  - \($0)\n" }.joined()
            }
            Output.print(text)
        }
        return report.differences.isEmpty ? .ok : .drift
    }

    /// Compares the live catalog with the applied migrations, and Steward's history with the Supabase CLI's (shared
    /// with `fleet verify`).
    static func verify(_ connection: Connection, source: MigrationSource, shadowServer: ConnectionString?, supabaseHistory: SupabaseHistoryMode,
                       logger: Logger) throws -> Verifier.Report {
        try connection.requireSessionState()
        var report = try Verifier(connection: connection, source: source, advisor: SupabaseAdvisor(), shadowServer: shadowServer,
                                  logger: logger.named("verify")).verify()
        // Drift between Steward's history and the Supabase CLI's, which the CLI itself cannot see.
        var options = Migrator.Options()
        options.supabaseHistory = supabaseHistory
        report.differences += try Migrator(connection: connection, source: source, logger: logger).status(options: options).historyDrift
        return report
    }
}

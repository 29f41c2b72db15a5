import CLI
import StewardLog
import Migrations
import SupabaseProject
import OutputText

/// `steward verify`: checks the live database still matches the applied migrations.
enum VerifyCommand: StewardCommand {
    static let spec = CommandSpec(
        name: "verify",
        abstract: "Check the live database still matches the applied migrations.",
        discussion: """
        Compares every applied file's objects with the live catalog: row level security on, policies present
        with the same command, roles and expressions, functions (SECURITY DEFINER, search_path, body), triggers
        present and enabled, grants, buckets present and private. Lists every difference and exits 2 if there is
        one. Rights narrower than the files give (a hardening revoke) are listed as stricter than the migrations,
        exit 0; wider ones are differences. Objects of files not yet applied that already exist (pasted by hand)
        are a difference too, pointing at migrate --adopt. Also reports the quickstart's known weaknesses (anonymous uploads, case-sensitive usernames, no
        ON DELETE CASCADE) as advice, without failing. The check runs in a transaction that is rolled back. A file
        migrate refuses as it is (one that controls its own transaction) is listed as not compared, not a failure.
        """,
        options: CommandSpec.Option.databaseOptions)

    static func run(_ context: CommandContext) throws -> ExitCode {
        // A file migrate would refuse is shown, not a reason to refuse the whole check.
        let (source, invalid) = try context.migrationSource(deferParsing: true).parsedWhereValid()
        let connection = try context.connect()
        try connection.requireSessionState()
        var report = try Verifier(connection: connection, source: source, advisor: SupabaseAdvisor()).verify()
        // Drift between Steward's history and the Supabase CLI's, which the CLI itself cannot see.
        var options = Migrator.Options()
        options.supabaseHistory = SupabaseHistoryMode(rawValue: context.config.supabaseHistory) ?? .auto
        report.differences += try Migrator(connection: connection, source: source, logger: context.logger).status(options: options).historyDrift
        if context.json {
            Output.print(JSON.object([
                ("ok", .bool(report.differences.isEmpty)),
                ("checked_files", .number(Double(report.checkedFiles))),
                ("differences", .strings(report.differences)),
                ("stricter", .strings(report.stricter)),
                ("advisories", .strings(report.advisories)),
                ("enforcement", .strings(report.enforcement)),
                ("not_compared", .strings(invalid + report.notCompared)),
            ]).rendered)
        } else {
            var text = report.differences.isEmpty
                ? "ok: the database matches the \(report.checkedFiles) applied migration(s)\n"
                : "\(report.differences.count) difference(s) between the database and the applied migrations:\n"
                    + report.differences.map { "  - \($0)\n" }.joined()
            if !report.stricter.isEmpty {
                text += "\nstricter than the migrations (rights narrowed since, not a failure):\n" + report.stricter.map { "  - \($0)\n" }.joined()
            }
            if !invalid.isEmpty {
                text += "\nnot compared (migrate refuses these files as they are):\n" + invalid.map { "  - \(LogText.escaped($0))\n" }.joined()
            }
            if !report.notCompared.isEmpty {
                text += "\nnot compared (information: what these statements made is not checked):\n"
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
}

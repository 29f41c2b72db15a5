import CLI
import Config
import Lint
import Migrations
import OutputText

/// `steward lint`: what each pending statement will lock, on which table, for how long, and whether that blocks a
/// deploy to a live database.
enum LintCommand: BlockingStewardCommand {
    static let spec = CommandSpec(
        name: "lint",
        abstract: "Show what each pending statement locks, and find the ones that would stall the app.",
        discussion: """
        Each pending file is read by PostgreSQL's own parser and judged against the live catalog: every statement
        gets the lock it takes (ACCESS EXCLUSIVE for most ALTER TABLE forms, SHARE for CREATE INDEX, SHARE UPDATE
        EXCLUSIVE for CREATE INDEX CONCURRENTLY and VALIDATE CONSTRAINT), its table, the table's estimated rows, and
        whether it scans or rewrites the table. Rules carry squawk's names where squawk has one
        (require-concurrent-index-creation, require-concurrent-index-deletion, constraint-missing-not-valid,
        adding-foreign-key-constraint, adding-not-nullable-field, adding-field-with-default, changing-column-type,
        renaming-column, renaming-table, ban-drop-column, ban-drop-table, disallowed-unique-constraint,
        adding-serial-primary-key-field, require-concurrent-reindex, adding-required-field), plus what only the
        database can tell: vacuum-full-or-cluster, lock-table, unbounded-data-change (UPDATE or DELETE without WHERE),
        dropped-column-used (a view, policy or function that uses a dropped or renamed column).

        Context decides severity. A statement on a table created earlier in the same run, or on a table with fewer
        rows than [lint] small_table_rows (default 10000), is information and says why; the same on a larger table
        is a blocking finding, with the safe alternative written out. Drops and renames block on a table of any size
        that exists already. A file allows a rule on a line of its own in its header: -- steward:allow ban-drop-column.
        A file is one transaction: a statement after an ACCESS EXCLUSIVE one on the same table runs under it.

        Exit 2 when a finding blocks (and is not allowed), 0 otherwise; information does not change the exit code.
        Nothing is changed: lint reads the catalog, and counts at most small_table_rows rows of a table never analysed.
        """,
        options: CommandSpec.Option.databaseOptions)

    static func run(_ context: CommandContext) throws -> ExitCode { try runBlocking(context) }

    static func runBlocking(_ context: CommandContext) throws -> ExitCode {
        let source = try context.migrationSource()
        let connection = try context.connect()
        var options = Migrator.Options()
        options.supabaseHistory = MigrationsConfig.historyMode(context.config)
        let status = try Migrator(connection: connection, source: source, logger: context.logger.named("lint")).status(options: options)
        let report: LintReport
        do {
            report = try Linter(connection: connection, smallTableRows: Double(context.config[LintConfig.smallTableRows])).lint(status.pending)
        } catch let error as LintError {
            Output.error(error.message)
            return .failure
        }
        Output.print(context.json ? report.json.rendered : report.text)
        return report.blocking.isEmpty ? .ok : .drift
    }
}

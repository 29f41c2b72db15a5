import CLI
import Config
import StewardLog
import Lint
import Migrations
import StewardJSON

/// `steward migrate`: applies pending migration files, one transaction each, under the migration lock.
enum MigrateCommand: BlockingStewardCommand {
    static let spec = CommandSpec(
        name: "migrate",
        abstract: "Apply pending migrations (or show the plan with --dry-run).",
        discussion: """
        Each file runs in its own transaction together with its history row in steward.schema_migrations:
        a failing file leaves nothing behind. Before anything runs, dry run too, the pending files are linted
        (see steward lint): a blocking finding no file allows refuses the run, exit 1. Each file runs under a
        short lock_timeout (the slice) and is retried after a backoff until [migrations] lock_retry_budget, so the
        app's queries never queue long behind it. What the file produced in the catalog is recorded in the same
        transaction (steward.schema_record), for verify. Files starting with "-- steward:no-transaction" run statement by
        statement (CREATE INDEX CONCURRENTLY …). A session advisory lock keeps concurrent runs apart; a killed
        run releases it. Applied files that changed are refused (whitespace- or comment-only changes are accepted
        with a warning); pending files older than the newest applied one are refused unless --allow-out-of-order.

        --adopt brings a database where the files were applied by hand (the SQL editor, psql) under migrations:
        the files are applied to a scratch shadow database (on the same server, or --shadow-url / [verify]
        shadow_url), and what they produce there is compared with the live catalog; the leading files whose
        objects exist and match are recorded as applied, with what they produced; any difference is listed and
        nothing is recorded. Nothing of the files runs in the live database.

        Examples:
          steward migrate --dry-run
          steward migrate --database-url postgresql://postgres@db.<ref>.supabase.co:5432/postgres
          steward migrate --adopt
          steward migrate --migrations supabase/migrations

        Beside the Supabase CLI ([migrations] supabase_history, on by default when supabase_migrations.schema_migrations
        exists or the folder is a Supabase CLI project's): every file Steward applies also gets its row in the CLI's
        history, in the same transaction. Files `supabase db push` applied are taken over (recorded with method
        supabase-cli, never re-run) when the statements the CLI stored equal the file's, ignoring whitespace and
        comments; a file changed since the CLI applied it is refused. Files only Steward recorded get their CLI rows.
        """,
        options: CommandSpec.Option.databaseOptions + [
            .init("dry-run", help: "Print the files and statements that would run; change nothing."),
            .init("adopt", help: "Record files whose objects already exist exactly as the files create them (checked in a shadow database)."),
            .init("allow-out-of-order", help: "Apply pending files older than the newest applied one."),
            .init("allow-missing", help: "Go on when applied migrations have no file any more."),
            .init("lock-wait", value: "SECONDS", help: "How long to wait for another migrator's lock (default 60)."),
            .init("lock-retry-budget", value: "SECONDS", help: "How long one file may keep retrying its lock slices (default [migrations] lock_retry_budget, 120)."),
            .shadowURL,
        ])

    static func run(_ context: CommandContext) throws -> ExitCode { try runBlocking(context) }

    static func runBlocking(_ context: CommandContext) throws -> ExitCode {
        let options = try migratorOptions(context, command: spec.name)
        let source = try context.migrationSource(deferParsing: true)
        let connection = try Self.connecting(source) { try context.connect() }
        let report = try Migrator(connection: connection, source: source, logger: context.logger.named("migrations"))
            .migrate(options: options)
        return print(report, json: context.json)
    }

    /// The migrator's options from the flags and the config, the lint gate included (shared with `fleet migrate`).
    static func migratorOptions(_ context: CommandContext, command: String) throws -> Migrator.Options {
        var options = Migrator.Options()
        options.dryRun = context.arguments.flag("dry-run")
        options.adopt = context.arguments.flag("adopt")
        options.allowOutOfOrder = context.arguments.flag("allow-out-of-order")
        options.allowMissing = context.arguments.flag("allow-missing")
        options.lockWaitSeconds = context.config[MigrationsConfig.lockWait]
        if let wait = context.arguments.value("lock-wait") {
            guard let seconds = ConfigNumber.seconds(wait, in: 0...86400) else {
                throw UsageError(command: command, message: "--lock-wait takes a number of seconds from 0 to 86400")
            }
            options.lockWaitSeconds = seconds
        }
        options.lockRetry = LockRetryPolicy(firstSliceMilliseconds: ConfigNumber.postgresMilliseconds(context.config[MigrationsConfig.lockTimeout]) ?? 200,
                                            budgetSeconds: context.config[MigrationsConfig.lockRetryBudget])
        if let budget = context.arguments.value("lock-retry-budget") {
            guard let seconds = ConfigNumber.seconds(budget, in: 0...86400) else {
                throw UsageError(command: command, message: "--lock-retry-budget takes a number of seconds from 0 to 86400")
            }
            options.lockRetry.budgetSeconds = seconds
        }
        options.statementTimeout = context.config[MigrationsConfig.statementTimeout]
        options.stewardVersion = Steward.version
        options.supabaseHistory = MigrationsConfig.historyMode(context.config)
        options.shadowServer = try context.shadowServer()
        // The lint gates every run, dry run too: a blocking finding no file allows refuses it before anything runs.
        let smallTableRows = Double(context.config[LintConfig.smallTableRows])
        options.pendingCheck = { connection, files in
            let report = try Linter(connection: connection, smallTableRows: smallTableRows).lint(files)
            return Migrator.PendingCheck(blocking: report.blocking.map { finding in
                "\(finding.location): \(finding.rule)" + (finding.table.map { " on \($0)" } ?? "") + (finding.lock.map { " (\($0.name))" } ?? "")
                    + ": \(finding.detail); instead: \(finding.alternative)"
            }, summary: report.text)
        }
        return options
    }

    /// Prints what `migrate` did (or would do) and returns its exit code.
    static func print(_ report: Migrator.Report, json: Bool) -> ExitCode {
        if json {
            Output.print(JSON.object([
                ("dry_run", .bool(report.dryRun)),
                ("already_applied", .number(Double(report.alreadyApplied))),
                ("adopted", .strings(report.adopted)),
                ("taken_over", .strings(report.takenOver)),
                ("supabase_history_recorded", .strings(report.cliRecorded)),
                ("applied", .array(report.applied.map { .object([("file", .string($0.file)), ("duration_ms", .number(($0.milliseconds * 10).rounded() / 10))]) })),
                ("plan", .array(report.plan.map { file in
                    .object([("file", .string(file.fileName)), ("transactional", .bool(file.transactional)),
                             ("statements", .strings(file.statementTexts))])
                })),
                ("warnings", .strings(report.warnings)),
                ("lint", .optional(report.checkSummary)),
            ]).rendered)
            return .ok
        }
        var text = ""
        for warning in report.warnings { text += "warning: \(warning)\n" }
        if report.dryRun {
            if !report.adopted.isEmpty {
                text += "dry run: would adopt \(report.adopted.count) file(s) whose objects already exist: \(report.adopted.joined(separator: ", "))\n"
            }
            if !report.takenOver.isEmpty {
                text += "dry run: would take over \(report.takenOver.count) file(s) applied by `supabase db push` (recorded, not re-run): \(report.takenOver.joined(separator: ", "))\n"
            }
            if !report.cliRecorded.isEmpty {
                text += "dry run: would add \(report.cliRecorded.count) file(s) to the Supabase CLI's history: \(report.cliRecorded.joined(separator: ", "))\n"
            }
            if report.plan.isEmpty && report.adopted.isEmpty && report.takenOver.isEmpty && report.cliRecorded.isEmpty {
                text += "dry run: nothing to apply (\(report.alreadyApplied) applied)\n"
            } else if !report.plan.isEmpty {
                text += "dry run: would apply \(report.plan.count) file(s); nothing was changed\n"
            }
            if let summary = report.checkSummary {
                text += "\nlocks and lint (steward lint):\n" + summary
            }
            for file in report.plan {
                text += "\n== \(file.fileName)" + (file.transactional ? " (one transaction)" : " (no transaction: statement by statement)") + "\n"
                for (index, statement) in file.statementTexts.enumerated() {
                    text += "-- statement \(index + 1)\n\(statement);\n"
                }
            }
        } else {
            for file in report.takenOver { text += "taken over  \(file)  (applied by supabase db push)\n" }
            for file in report.cliRecorded { text += "recorded in the Supabase CLI's history  \(file)\n" }
            for file in report.adopted { text += "adopted  \(file)\n" }
            for applied in report.applied { text += "applied  \(applied.file)  (\(formatMilliseconds(applied.milliseconds)))\n" }
            if report.applied.isEmpty && report.adopted.isEmpty && report.takenOver.isEmpty && report.cliRecorded.isEmpty {
                text += "up to date: \(report.alreadyApplied) migration(s) applied, nothing pending\n"
            } else {
                text += "done: \(report.takenOver.count) taken over, \(report.adopted.count) adopted, \(report.applied.count) applied, \(report.alreadyApplied) already applied\n"
            }
        }
        Output.print(text)
        return .ok
    }

    /// Runs `connect`; when it fails, a bad file is reported in its place, as when every file was parsed up front.
    static func connecting<T>(_ source: MigrationSource, _ connect: () throws -> T) throws -> T {
        do {
            return try connect()
        } catch {
            _ = try source.parsed()
            throw error
        }
    }
}

func formatMilliseconds(_ ms: Double) -> String {
    ms < 10 ? "\(Double(Int(ms * 10)) / 10) ms" : "\(Int(ms.rounded())) ms"
}

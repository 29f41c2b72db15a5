import Config
import Jobs
import StewardLog

/// `import-legacy-users`: a one-shot move of the older tutorial's `User` rows into `profiles` (see `LegacyUserImport`).
public struct ImportLegacyUsersJob: Job {
    public static let name = "import-legacy-users"
    public static let abstract = "Copy the older tutorial's \"User\" rows into profiles (full_name from name), filling only empty fields; "
        + "rows it cannot confirm (id, auth user, email) and users whose rows hold different names are reported, not imported."
    public static let defaultSchedule = "@yearly"
    /// A column name: not empty, no NUL (it is quoted as an identifier, never spliced).
    static let columnName = ConfigValueType<String>.text.checked { value in
        value.isEmpty || value.unicodeScalars.contains("\0") ? ConfigProblem("a column name is needed", saysAll: false) : nil
    }
    static let table = ConfigKey("table", ConfigValueType<String>.text.map({ table -> Result<(schema: String, table: String), ConfigProblem> in
        let parts = table.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !table.isEmpty, parts.allSatisfy({ !$0.isEmpty && !$0.unicodeScalars.contains("\0") }) else {
            return .failure(ConfigProblem("expected a table name, schema.table (such as public.User)", saysAll: false))
        }
        return .success((parts.count == 2 ? parts[0] : "public", parts.last ?? table))
    }, describe: { "\($0.schema).\($0.table)" }), default: ("public", "User"), takes: "the legacy table, schema.table")
    static let userIDColumn = ConfigKey("user_id_column", columnName, default: "userID", takes: "the column holding the auth user's id as text")
    static let nameColumn = ConfigKey("name_column", columnName, default: "name", takes: "the column copied to profiles.full_name")
    static let emailColumn = ConfigKey("email_column", columnName, default: "email",
                                       takes: "the column compared with the auth user's email (a row where it is NULL is not imported)")
    static let batchRows = ConfigKey("batch_rows", .integer(1...100_000), default: 1000,
                                     takes: "the most profiles one transaction fills (1 to 100000); a user's profile save waits one batch at most")
    static let batchSeconds = ConfigKey("batch_seconds", .seconds(0.01...60), default: 1,
                                        takes: "seconds after which a transaction starts no further statement and commits (0.01 to 60)")
    public static let options: [any ConfigKeyDeclaration] = [table, userIDColumn, nameColumn, emailColumn, batchRows, batchSeconds]

    /// `[job.import-legacy-users]`, read once: the table, its columns and the batches' bounds.
    public struct Settings: Sendable {
        public let importer: LegacyUserImport
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        let (schema, name) = options[table]
        return Settings(importer: LegacyUserImport(schema: schema, table: name, userIDColumn: options[userIDColumn],
                                                   nameColumn: options[nameColumn], emailColumn: options[emailColumn],
                                                   batchRows: options[batchRows], batchSeconds: options[batchSeconds]))
    }

    let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    /// Scheduled only when `[job.import-legacy-users]` is written in the config.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { config.jobSections.contains { $0.name == name } }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let importer = settings.importer, dryRun = context.dryRun, progress = context.progress
        let outcome = try await context.database.run { c in try importer.run(c, dryRun: dryRun, progress: progress) }
        for skipped in outcome.skipped {
            if skipped.reason == "conflicting_duplicates" {
                context.logger.warning("legacy user rows disagree, none imported", [("user_id", skipped.userID), ("rows", String(skipped.rows)),
                                                                                    ("reason", skipped.reason)])
            } else {
                context.logger.warning("legacy user row not imported", [("user_id", skipped.userID), ("reason", skipped.reason)])
            }
        }
        // Only the first few of each reason are named; say how many more there are, so a short log is not read as all.
        for reason in LegacyUserImport.skipReasons {
            let listed = outcome.skipped.filter { $0.reason == reason }
            let all = reason == "conflicting_duplicates" ? outcome.conflictingUsers : outcome.counts[reason] ?? 0
            if all > Int64(listed.count) {
                let unlisted = (reason == "conflicting_duplicates" ? "users_not_listed" : "rows_not_listed", String(all - Int64(listed.count)))
                context.logger.warning("more legacy user rows not imported than listed", [("reason", reason), unlisted])
            }
        }
        let longest = Int64((outcome.longestTransaction / .milliseconds(1)).rounded(.up))
        if !dryRun {
            context.logger.info("legacy user import committed", [("transactions", String(outcome.transactions)), ("longest_transaction_ms", String(longest))])
        }
        var summary = JobSummary()
        summary.set("legacy_rows", outcome.rows)
        summary.set(dryRun ? "would_import" : "imported", outcome.counts["imported"] ?? 0)
        summary.set("already_there", outcome.counts["already_there"] ?? 0)
        summary.set("identical_duplicates", outcome.counts["identical_duplicates"] ?? 0)
        for reason in LegacyUserImport.skipReasons { summary.set("skipped_\(reason)", outcome.counts[reason] ?? 0) }
        summary.set("transactions", Int64(outcome.transactions))
        summary.set("longest_transaction_ms", longest)
        return summary
    }
}

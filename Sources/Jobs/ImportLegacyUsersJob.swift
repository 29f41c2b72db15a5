import Config
import Logging

/// `import-legacy-users`: a one-shot move of the older tutorial's `User` rows into `profiles` (see `LegacyUserImport`).
public struct ImportLegacyUsersJob: Job {
    public static let name = "import-legacy-users"
    public static let abstract = "Copy the older tutorial's \"User\" rows into profiles (full_name from name), filling only empty fields."
    public static let defaultSchedule = "@yearly"
    public static let options: [JobOption] = [
        JobOption("table", default: "public.User", help: "the legacy table, schema.table"),
        JobOption("user_id_column", default: "userID", help: "the column holding the auth user's id as text"),
        JobOption("name_column", default: "name", help: "the column copied to profiles.full_name"),
        JobOption("email_column", default: "email", help: "the column compared with the auth user's email"),
    ]

    let importer: LegacyUserImport

    public init(settings: JobSettings, config: StewardConfig) throws(ConfigError) {
        let table = settings.value("table")
        let parts = table.split(separator: ".", maxSplits: 1).map(String.init)
        importer = LegacyUserImport(schema: parts.count == 2 ? parts[0] : "public", table: parts.last ?? table,
                                    userIDColumn: settings.value("user_id_column"), nameColumn: settings.value("name_column"),
                                    emailColumn: settings.value("email_column"))
    }

    /// Scheduled only when `[job.import-legacy-users]` is written in the config.
    public static func enabledByDefault(_ config: StewardConfig) -> Bool { config.jobSections.contains { $0.name == name } }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let importer = importer, dryRun = context.dryRun
        let outcome = try await context.database.run { c in try importer.run(c, dryRun: dryRun) }
        for skipped in outcome.skipped.prefix(50) { context.logger.warning("legacy user row not imported", [("user_id", skipped.row), ("reason", skipped.reason)]) }
        var summary = JobSummary()
        summary.set(dryRun ? "would_import" : "imported", outcome.counts["imported"] ?? 0)
        summary.set("already_there", outcome.counts["already_there"] ?? 0)
        for reason in LegacyUserImport.skipReasons { summary.set("skipped_\(reason)", outcome.counts[reason] ?? 0) }
        return summary
    }
}

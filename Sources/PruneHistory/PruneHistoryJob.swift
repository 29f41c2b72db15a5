import Config
import FoundationEssentials
import Jobs
import Postgres

/// Deletes finished run history older than its retention, so `steward.job_runs` stays small.
public struct PruneHistoryJob: Job {
    public static let name = "prune-history"
    public static let abstract = "Delete job run history older than the retention (default 90d)."
    public static let defaultSchedule = "17 3 * * *"
    static let retention = ConfigKey("retention", .duration(example: "a duration such as 90d") { $0 >= 86400 ? nil : "keep at least 1d of history" },
                                     default: 90 * 86400, takes: "how long to keep finished runs, as a duration (at least 1d)")
    public static let options: [any ConfigKeyDeclaration] = [retention]

    /// `[job.prune-history]`, read once.
    public struct Settings: Sendable {
        /// How long finished runs are kept, in seconds (at least a day).
        public let retentionSeconds: Int64
    }

    public static func settings(_ options: JobOptions, config: StewardConfig) throws(ConfigError) -> Settings {
        Settings(retentionSeconds: options[retention])
    }

    let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let retention = settings.retentionSeconds
        let dryRun = context.dryRun, progress = context.progress
        let (matched, kept): (Int64, Int64) = try await context.database.run { c in
            let cutoff: PostgresQuery = "now() - make_interval(secs => \(Double(retention))::float8)"
            let old: PostgresQuery = "status <> 'running' and coalesce(finished_at, started_at, scheduled_for) < \(cutoff)"
            progress.begin("counting")
            let (matched, kept) = try c.query("select count(*) filter (where \(old)), count(*) filter (where not (\(old))) from steward.job_runs")
                .first((Int64, Int64).self)
            if dryRun { return (matched, kept) }
            progress.begin("deleting", total: matched)
            let deleted = Int64(try c.query("delete from steward.job_runs where \(old)").affectedRows)
            progress.set(done: deleted)
            return (deleted, try c.query("select count(*) from steward.job_runs").scalar(Int64.self))
        }
        var summary = JobSummary()
        summary.set(dryRun ? "would_delete" : "deleted", matched)
        summary.set("kept", kept)
        summary.set("retention_days", retention / 86400)
        return summary
    }
}

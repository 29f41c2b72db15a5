import Config
import Foundation
import Postgres
import Scheduler

/// Deletes finished run history older than its retention, so `steward.job_runs` stays small.
public struct PruneHistoryJob: Job {
    public static let name = "prune-history"
    public static let abstract = "Delete job run history older than the retention (default 90d)."
    public static let defaultSchedule = "17 3 * * *"
    public static let options = [
        JobOption("retention", default: "90d", help: "how long to keep finished runs, as a duration (at least 1d)") { value in
            guard let seconds = try? Schedule.seconds(inDuration: value) else { return "\"\(value)\" is not a duration such as 90d" }
            return seconds >= 86400 ? nil : "keep at least 1d of history"
        },
    ]

    let retentionSeconds: Int64

    public init(settings: JobSettings, config: StewardConfig) throws(ConfigError) {
        retentionSeconds = (try? Schedule.seconds(inDuration: settings.value("retention"))) ?? 90 * 86400
    }

    public func run(_ context: JobContext) async throws -> JobSummary {
        let retention = retentionSeconds
        let dryRun = context.dryRun
        let (matched, kept): (Int64, Int64) = try await context.database.run { c in
            let cutoff = "now() - make_interval(secs => $1::float8)"
            let old = "status <> 'running' and coalesce(finished_at, started_at, scheduled_for) < \(cutoff)"
            if dryRun {
                let row = try c.query("select count(*) filter (where \(unescaped: old)), count(*) filter (where not (\(unescaped: old))) from steward.job_runs",
                                      [Double(retention)]).rows[0]
                return (try row.decode(Int64.self, at: 0), try row.decode(Int64.self, at: 1))
            }
            let deleted = Int64(try c.query("delete from steward.job_runs where \(unescaped: old)", [Double(retention)]).affectedRows)
            return (deleted, try c.query("select count(*) from steward.job_runs").rows[0].decode(Int64.self, at: 0))
        }
        var summary = JobSummary()
        summary.set(dryRun ? "would_delete" : "deleted", matched)
        summary.set("kept", kept)
        summary.set("retention_days", retention / 86400)
        return summary
    }
}

import FileSystem
import FoundationEssentials
import Jobs

/// The daemon's state in Prometheus' text format (for `ctl metrics` and node_exporter's textfile collector).
enum MetricsRenderer {
    static func render(_ coordinator: Coordinator) -> String {
        let s = coordinator.state.withLock { $0 }
        var out = ""
        let project = s.settings.config[DaemonConfig.metricsProject]
        func metric(_ name: String, _ help: String, _ type: String, _ samples: [(String, Double)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples { out += name + withProject(labels, project) + " " + format(value) + "\n" }
        }
        func job(_ name: String) -> String { "{job=\"\(name)\"}" }
        let jobs = s.settings.jobs.map(\.settings.name)
        metric("steward_leader", "1 while this instance schedules the jobs", "gauge", [("", s.isLeader ? 1 : 0)])
        metric("steward_database_up", "1 while the database answers", "gauge", [("", s.databaseReachable ? 1 : 0)])
        metric("steward_start_time_seconds", "when this instance started", "gauge", [("", coordinator.startedAt.timeIntervalSince1970)])
        metric("steward_migrations_pending", "migration files not applied yet", "gauge", [("", Double(s.pendingMigrations))])
        metric("steward_schema_differences", "differences between the live database and the applied migrations", "gauge",
               [("", Double(s.schemaDifferences))])
        metric("steward_schema_advisories", "known weaknesses of the app schema that verify advises about (not differences)", "gauge",
               [("", Double(s.schemaAdvisories))])
        metric("steward_job_enabled", "1 when the job is enabled", "gauge",
               s.settings.jobs.map { (job($0.settings.name), $0.settings.enabled ? 1 : 0) })
        metric("steward_job_paused", "1 when the job is paused", "gauge", jobs.map { (job($0), s.scheduler.isPaused($0) ? 1 : 0) })
        metric("steward_job_running", "1 while a run of the job is going on here", "gauge", jobs.map { (job($0), s.scheduler.isRunning($0) ? 1 : 0) })
        let now = ContinuousClock.now
        metric("steward_job_progress_ratio", "done of total in the current phase of the job's run going on here (only while it runs with a known total)",
               "gauge", jobs.compactMap { name in
                   s.progress[name].flatMap { JobProgressEstimate($0.snapshot, now: now).ratio }.map { (job(name), $0) }
               })
        metric("steward_job_last_success_timestamp_seconds", "when the job last succeeded", "gauge",
               jobs.compactMap { name in s.lastSuccess[name].map { (job(name), $0.timeIntervalSince1970) } })
        metric("steward_job_last_duration_seconds", "how long the last run took", "gauge",
               jobs.compactMap { name in s.lastDuration[name].map { (job(name), $0) } })
        var runs: [(String, Double)] = []
        for name in jobs {
            for status in ["succeeded", "failed", "skipped", "missed"] {
                runs.append(("{job=\"\(name)\",status=\"\(status)\"}", Double(s.runs[name]?[status] ?? 0)))
            }
        }
        metric("steward_job_runs_total", "runs and slots by outcome since this instance started", "counter", runs)
        metric("steward_job_last_result", "the numbers of the job's last successful run (e.g. username-check: new findings)", "gauge",
               jobs.flatMap { name in (s.lastSummary[name] ?? []).map { ("{job=\"\(name)\",key=\"\($0.0)\"}", Double($0.1)) } })
        metric("steward_job_consecutive_failures", "failed attempts of the job since its last success on this instance", "gauge",
               jobs.map { (job($0), Double(s.consecutiveFailures[$0] ?? 0)) })
        metric("steward_job_missed_slots_total", "slots missed since this instance started", "counter",
               jobs.map { (job($0), Double(s.missed[$0] ?? 0)) })
        return out
    }

    /// `labels` with `project="<name>"` first when a project is set (`[metrics] project`, `STEWARD_PROJECT`), so the
    /// daemons of many projects (steward@.service) share one set of rules; unchanged without one. The name is
    /// checked when the configuration is read (no character that needs escaping).
    static func withProject(_ labels: String, _ project: String?) -> String {
        guard let project else { return labels }
        let own = "project=\"\(project)\""
        return labels.isEmpty ? "{\(own)}" : "{\(own)," + labels.dropFirst()
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Replaces `path` with `text` (mode 644) whole, as the textfile collector needs; never through a link or
    /// over another user's file (see `AtomicFile`).
    static func write(_ text: String, to path: String) throws {
        try AtomicFile.write(text, to: path, mode: 0o644)
    }
}

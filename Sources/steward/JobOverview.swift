import Alerts
import Daemon
import FoundationEssentials
import Jobs
import StewardLog
import Postgres
import OutputText
import StewardJSON

/// The leader and each job's last runs, read straight from the database (for `steward status`).
struct JobOverview {
    struct JobLine {
        let name: String
        let lastStatus: String?
        let lastStarted: String?
        let lastSuccess: String?
        let next: String?
        /// The progress of its run going on in a daemon on this machine, if one answered.
        let progress: JobProgressEstimate?
    }

    let leader: LeaderRecord?
    let jobs: [JobLine]
    /// Alerts of the last 30 days (Apple secret reminders, …), newest first.
    let alerts: [AlertLog.Recent]

    /// Nil when the database has no job history yet (no daemon or job has run).
    /// `progress`: what a daemon on this machine says of its running jobs (see `DaemonProgress`).
    static func read(_ c: Connection, settings: DaemonSettings?, progress: [String: JobProgressEstimate] = [:]) throws -> JobOverview? {
        guard let latest = try RunHistory.latest(c, jobs: settings?.jobs.map(\.settings.name) ?? []) else { return nil }
        let leader = try LeaderRecord.read(c)
        let now = Date()
        let jobs = latest.map { row in
            let configured = settings?.jobs.first { $0.settings.name == row.job }
            let next = configured.flatMap { $0.settings.enabled ? ISODate.string($0.settings.schedule.next(after: now)) : "disabled" }
            return JobLine(name: row.job, lastStatus: row.lastStatus, lastStarted: row.lastStarted, lastSuccess: row.lastSuccess, next: next,
                           progress: progress[row.job])
        }
        return JobOverview(leader: leader, jobs: jobs, alerts: try AlertLog.recent(c))
    }

    /// Values read from the database (an alert names the objects it is about, and a table may be named with escape
    /// sequences or a newline) are escaped as log lines are.
    var text: String {
        let e = LogText.escaped
        var text = "leader: "
        if let leader {
            text += "\(e(leader.host)) pid \(leader.pid) since \(leader.since)" + (leader.holding ? "" : " (NOT holding the lock now: no instance leads)") + "\n"
        } else {
            text += "none yet\n"
        }
        text += "\nJOB              LAST        LAST STARTED          LAST SUCCESS          NEXT (from --config)\n"
        for job in jobs {
            text += e(job.name).padding(17) + (job.lastStatus ?? "-").padding(12) + (job.lastStarted ?? "-").padding(22)
                + (job.lastSuccess ?? "-").padding(22) + (job.next ?? "-") + "\n"
            if let progress = job.progress { text += "  running here: \(progress.line)\n" }
        }
        if !alerts.isEmpty {
            text += "\nalerts (last 30 days):\n" + alerts.map { "  \($0.at) \(e($0.level.uppercased())) \(e($0.message))\n" }.joined()
        }
        return text
    }

    var leaderJSON: JSON {
        guard let leader else { return .null }
        return .object([("host", .string(leader.host)), ("pid", .number(Double(leader.pid))), ("since", .string(leader.since)),
                        ("holding_lock", .bool(leader.holding))])
    }

    var alertsJSON: JSON {
        .array(alerts.map { .object([("level", .string($0.level)), ("at", .string($0.at)), ("message", .string($0.message))]) })
    }

    var jobsJSON: JSON {
        .array(jobs.map { job in
            .object([("name", .string(job.name)), ("last_status", .optional(job.lastStatus)), ("last_started", .optional(job.lastStarted)),
                     ("last_success", .optional(job.lastSuccess)), ("next", .optional(job.next)), ("progress", job.progress?.json ?? .null)])
        })
    }
}

import Daemon
import Foundation
import Jobs
import Logging
import Postgres

/// The leader and each job's last runs, read straight from the database (for `steward status`).
struct JobOverview {
    struct JobLine {
        let name: String
        let lastStatus: String?
        let lastStarted: String?
        let lastSuccess: String?
        let next: String?
    }

    let leader: (host: String, pid: Int, since: String, holding: Bool)?
    let jobs: [JobLine]
    /// Alerts of the last 30 days (Apple secret reminders, …), newest first.
    let alerts: [(level: String, at: String, message: String)]

    /// Nil when the database has no job history yet (no daemon or job has run).
    static func read(_ c: Connection, settings: DaemonSettings?) throws -> JobOverview? {
        guard try c.query("select to_regclass('steward.job_runs') is not null").scalar(Bool.self) else { return nil }
        let leaderRow = try c.query("""
            select host, pid, since,
                   exists (select 1 from pg_locks where locktype = 'advisory' and granted
                           and database = (select oid from pg_database where datname = current_database())
                           and ((classid::bigint << 32) | objid::bigint) = \(LeaderKey.value) and objsubid = 1)
            from steward.leader
            """).rows.first
        let leader = try leaderRow.map { row in
            let (host, pid, since, holding) = try row.decode((String, Int, Date, Bool).self)
            return (host, pid, ISODate.string(since), holding)
        }
        let rows = try c.query("""
            select j.job,
                   (select status from steward.job_runs r where r.job = j.job and r.status not in ('missed', 'skipped') order by started_at desc nulls last, id desc limit 1),
                   (select max(started_at) from steward.job_runs r where r.job = j.job),
                   (select max(finished_at) from steward.job_runs r where r.job = j.job and r.status = 'succeeded')
            from (select distinct job from steward.job_runs union select unnest(\(settings?.jobs.map(\.settings.name) ?? [])::text[])) j order by 1
            """).rows
        let now = Date()
        let jobs = try rows.map { row in
            let (name, lastStatus, lastStarted, lastSuccess) = try row.decode((String, RunStatus?, Date?, Date?).self)
            let configured = settings?.jobs.first { $0.settings.name == name }
            let next = configured.flatMap { $0.settings.enabled ? ISODate.string($0.settings.schedule.next(after: now)) : "disabled" }
            return JobLine(name: name, lastStatus: lastStatus?.rawValue, lastStarted: lastStarted.map(ISODate.string),
                           lastSuccess: lastSuccess.map(ISODate.string), next: next)
        }
        let alerts = try c.query("select to_regclass('steward.alerts') is not null").scalar(Bool.self) ? try c.query("""
            select level, created_at, message from steward.alerts
            where created_at > now() - interval '30 days' and message not like '(covered%' order by id desc limit 10
            """).decode((String, Date, String).self).map { ($0.0, ISODate.string($0.1), $0.2) } : []
        return JobOverview(leader: leader, jobs: jobs, alerts: alerts)
    }

    var text: String {
        var text = "leader: "
        if let leader {
            text += "\(leader.host) pid \(leader.pid) since \(leader.since)" + (leader.holding ? "" : " (NOT holding the lock now: no instance leads)") + "\n"
        } else {
            text += "none yet\n"
        }
        text += "\nJOB              LAST        LAST STARTED          LAST SUCCESS          NEXT (from --config)\n"
        for job in jobs {
            text += job.name.padding(17) + (job.lastStatus ?? "-").padding(12) + (job.lastStarted ?? "-").padding(22)
                + (job.lastSuccess ?? "-").padding(22) + (job.next ?? "-") + "\n"
        }
        if !alerts.isEmpty {
            text += "\nalerts (last 30 days):\n" + alerts.map { "  \($0.at) \($0.level.uppercased()) \($0.message)\n" }.joined()
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
                     ("last_success", .optional(job.lastSuccess)), ("next", .optional(job.next))])
        })
    }
}

import FoundationEssentials
import StewardLog
import Postgres
import OutputText
import StewardJSON

/// `steward.job_runs` and `steward.job_state`: every slot recorded as run, skipped or missed.
public struct RunHistory: Sendable {
    /// One row of the history.
    public struct Entry: Sendable {
        public let id: Int64
        public let job: String
        public let scheduledFor: Date?
        public let startedAt: Date?
        public let finishedAt: Date?
        public let status: RunStatus
        public let trigger: String
        public let attempt: Int
        public let dryRun: Bool
        public let summary: String?
        public let error: String?
        public let host: String
        public let pid: Int
    }

    let session: DatabaseSession
    /// Recorded in every row: which instance did it.
    public let host: String
    public let pid: Int

    public init(session: DatabaseSession, host: String, pid: Int) {
        self.session = session
        self.host = host
        self.pid = pid
    }

    /// Inserts a `running` row; nil when another instance already recorded this slot and attempt.
    public func start(job: String, scheduledFor: Date?, trigger: RunTrigger, attempt: Int, dryRun: Bool) async throws -> Int64? {
        let (host, pid) = (host, pid)
        return try await session.run { c in
            try c.query("""
                insert into steward.job_runs (job, scheduled_for, started_at, status, trigger, attempt, dry_run, host, pid)
                values ($1, to_timestamp($2::float8), now(), 'running', $3, $4, $5, $6, $7)
                on conflict (job, scheduled_for, attempt) where scheduled_for is not null do nothing
                returning id
                """, [job, scheduledFor?.timeIntervalSince1970, trigger.rawValue, attempt, dryRun, host, pid])
                .rows.first.map { try $0.decode(Int64.self, at: 0) }
        }
    }

    /// Closes a run: `succeeded` with its summary, or `failed` with the reason (known secrets removed from both).
    public func finish(id: Int64, succeeded: Bool, summary: JSON?, error: String?) async throws {
        let summary = summary.map { SecretRedactor.redact($0.rendered) }
        let error = error.map { SecretRedactor.redact($0) }
        try await session.run { c in
            _ = try c.query("""
                update steward.job_runs set finished_at = now(), status = $2, summary = $3::jsonb, error = $4 where id = $1
                """, [id, succeeded ? "succeeded" : "failed", summary, error])
        }
    }

    /// Records a slot that did not run (`skipped` or `missed`) with the reason; a slot already recorded is left alone.
    public func record(job: String, scheduledFor: Date, status: String, reason: String, trigger: RunTrigger = .schedule) async throws {
        let (host, pid) = (host, pid)
        let reason = SecretRedactor.redact(reason)
        try await session.run { c in
            _ = try c.query("""
                insert into steward.job_runs (job, scheduled_for, status, trigger, error, host, pid)
                values ($1, to_timestamp($2::float8), $3, $4, $5, $6, $7)
                on conflict (job, scheduled_for, attempt) where scheduled_for is not null do nothing
                """, [job, scheduledFor.timeIntervalSince1970, status, trigger.rawValue, reason, host, pid])
        }
    }

    /// Closes runs of `job` left `running` as failed, with the reason.
    static let closeInterrupted: PostgresQuery = """
        update steward.job_runs set status = 'failed', finished_at = now(),
          error = 'interrupted: the instance running it (' || host || ', pid ' || pid || ') stopped or lost its database connection before it finished'
        where job = $1 and status = 'running'
        """

    /// Runs left `running` by an instance that died or lost its database: marked failed with the reason.
    /// Call only while holding the job's lock (so no live run can be among them).
    public func markInterrupted(job: String) async throws -> Int {
        try await session.run { c in try c.query(Self.closeInterrupted, [job]).affectedRows }
    }

    /// The same for a job nobody runs now: takes the job's lock for the moment, or does nothing when it is held.
    public func sweepInterrupted(job: String) async throws -> Int {
        try await session.run { c -> Int in
            guard try c.query("select pg_try_advisory_lock(\(JobRunner.lockNamespace), hashtext(\(job)))").scalar(Bool.self) else { return 0 }
            defer { _ = try? c.query("select pg_advisory_unlock($1, hashtext($2))", [JobRunner.lockNamespace, job]) }
            return try c.query(Self.closeInterrupted, [job]).affectedRows
        }
    }

    /// The latest slot recorded for `job` (run, skipped or missed).
    public func lastSlot(job: String) async throws -> Date? {
        try await session.run { c in
            try c.query("select max(scheduled_for) from steward.job_runs where job = \(job)").scalar(Date?.self)
        }
    }

    /// The newest `limit` rows of `job` (all jobs when nil).
    public func recent(job: String?, limit: Int) async throws -> [Entry] {
        try await session.run { c in
            try c.query("""
                select id, job, scheduled_for, started_at, finished_at, status, trigger, attempt, dry_run, summary::text, error, host, pid
                from steward.job_runs where $1::text is null or job = $1
                order by coalesce(started_at, scheduled_for) desc, id desc limit $2
                """, [job, limit]).rows.map(Self.entry)
        }
    }

    /// The last run that started, and the last that succeeded, per job.
    public func lastRuns() async throws -> [String: (last: Entry?, lastSuccess: Entry?)] {
        let rows: [(String, Entry?, Entry?)] = try await session.run { c in
            let latest = try c.query("""
                select distinct on (job) id, job, scheduled_for, started_at, finished_at, status, trigger, attempt, dry_run, summary::text, error, host, pid
                from steward.job_runs where status not in ('missed', 'skipped') order by job, started_at desc nulls last, id desc
                """).rows.map(Self.entry)
            let success = try c.query("""
                select distinct on (job) id, job, scheduled_for, started_at, finished_at, status, trigger, attempt, dry_run, summary::text, error, host, pid
                from steward.job_runs where status = 'succeeded' order by job, finished_at desc, id desc
                """).rows.map(Self.entry)
            return Set(latest.map(\.job) + success.map(\.job)).map { job in
                (job, latest.first { $0.job == job }, success.first { $0.job == job })
            }
        }
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, (last: $0.1, lastSuccess: $0.2)) })
    }

    /// Pauses or resumes `job` cluster-wide (kept across restarts and failovers).
    public func setPaused(job: String, paused: Bool, by: String) async throws {
        try await session.run { c in
            _ = try c.query("""
                insert into steward.job_state (job, paused, changed_by) values ($1, $2, $3)
                on conflict (job) do update set paused = excluded.paused, changed_by = excluded.changed_by, changed_at = now()
                """, [job, paused, by])
        }
    }

    /// The jobs currently paused.
    public func pausedJobs() async throws -> Set<String> {
        try await session.run { c in
            Set(try c.query("select job from steward.job_state where paused").rows.map { try $0.decode(String.self, at: 0) })
        }
    }

    /// One job's line in `steward status`: its last run's status and start, and its last success (UTC, ISO 8601).
    public struct Latest: Sendable {
        public let job: String
        public let lastStatus: String?
        public let lastStarted: String?
        public let lastSuccess: String?
    }

    /// The latest runs of every job in the history and of each of `jobs`, by name; nil before the table exists.
    public static func latest(_ c: Connection, jobs: [String]) throws -> [Latest]? {
        guard try c.query("select to_regclass('steward.job_runs') is not null").scalar(Bool.self) else { return nil }
        return try c.query("""
            select j.job,
                   (select status from steward.job_runs r where r.job = j.job and r.status not in ('missed', 'skipped') order by started_at desc nulls last, id desc limit 1),
                   (select max(started_at) from steward.job_runs r where r.job = j.job),
                   (select max(finished_at) from steward.job_runs r where r.job = j.job and r.status = 'succeeded')
            from (select distinct job from steward.job_runs union select unnest(\(jobs)::text[])) j order by 1
            """).decode((String, RunStatus?, Date?, Date?).self).map { job, status, started, success in
            Latest(job: job, lastStatus: status?.rawValue, lastStarted: started.map(ISODate.string), lastSuccess: success.map(ISODate.string))
        }
    }

    static func entry(_ row: Row) throws -> Entry {
        func date(_ i: Int) throws -> Date? { try row.decode(Date?.self, at: i) }
        return Entry(id: try row.decode(Int64.self, at: 0), job: try row.decode(String.self, at: 1), scheduledFor: try date(2),
                     startedAt: try date(3), finishedAt: try date(4), status: try row.decode(RunStatus.self, at: 5),
                     trigger: try row.decode(String.self, at: 6), attempt: try row.decode(Int.self, at: 7),
                     dryRun: try row.decode(Bool.self, at: 8), summary: try row.decode(String?.self, at: 9),
                     error: try row.decode(String?.self, at: 10), host: try row.decode(String.self, at: 11), pid: try row.decode(Int.self, at: 12))
    }
}

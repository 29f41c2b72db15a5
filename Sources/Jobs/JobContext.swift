import FoundationEssentials
import StewardLog
import Postgres

/// What a job gets for one run.
public struct JobContext: Sendable {
    /// True for `--dry-run`: change nothing, report what would change.
    public let dryRun: Bool
    /// The job's own database session (it also holds the job's lock).
    public let database: DatabaseSession
    public let logger: Logger
    public let settings: JobSettings
    /// The slot this run belongs to (nil for manual runs).
    public let scheduledFor: Date?
    /// The run's id in `steward.job_runs`.
    public let runID: Int64
    /// `--force`: go past a job's safety brake.
    public let force: Bool
    /// When the run's timeout ends it: the run's task is cancelled then; blocking work (HTTP transfers) must stop by it.
    public let deadline: ContinuousClock.Instant
    /// Where the job says how far it has got (phase, done of total); the runner reports it in logs, `ctl jobs`,
    /// a terminal line and `steward_job_progress_ratio`.
    public let progress: JobProgress
    /// `database`'s connection count when the job's lock was taken: a higher one means the connection broke and the
    /// lock went with it (`lockHeld`).
    public let lockGeneration: Int

    /// Whether the job's lock is still held: false once `database` has had to open a new connection.
    public var lockHeld: Bool { database.generation == lockGeneration }
}

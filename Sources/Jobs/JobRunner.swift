import StewardDatabase
import FoundationEssentials
import StewardLog
import Postgres

/// Runs one job once: takes the job's cluster-wide lock, records the run, enforces the timeout,
/// and closes the record with the summary or the reason it failed.
public struct JobRunner: Sendable {
    /// What one attempt came to.
    public struct Outcome: Sendable {
        public enum Status: String, Sendable { case succeeded, failed, skipped }
        public let status: Status
        public let runID: Int64?
        public let summary: JobSummary?
        /// Why it failed or was skipped.
        public let reason: String?
        public let seconds: Double

        public init(status: Status, runID: Int64?, summary: JobSummary?, reason: String?, seconds: Double) {
            self.status = status
            self.runID = runID
            self.summary = summary
            self.reason = reason
            self.seconds = seconds
        }
    }

    /// A run-level failure reason that is not the job's own error.
    struct TimedOut: Error, CustomStringConvertible {
        let seconds: Double
        var description: String {
            let bounded = JobRunner.boundedSeconds(seconds)
            return "timed out after \(bounded == bounded.rounded() ? String(Int64(bounded)) : JobRunner.format(bounded)) s (the job was cancelled)"
        }
    }

    /// The run was cancelled from outside (the daemon stopping past `shutdown_timeout`) before it finished.
    struct Stopped: Error, CustomStringConvertible {
        var description: String { "cancelled before it finished (the process is stopping: shutdown_timeout reached)" }
    }

    let session: DatabaseSession
    let history: RunHistory
    let logger: Logger
    /// Seconds between "job progress" lines while a run goes on (`[log] progress_interval`).
    let progressIntervalSeconds: Double

    /// A runner using `session` for the job's lock, its history rows and the job's own queries.
    public init(session: DatabaseSession, host: String, pid: Int, logger: Logger, progressIntervalSeconds: Double = 5) {
        self.session = session
        self.history = RunHistory(session: session, host: host, pid: pid)
        self.logger = logger
        self.progressIntervalSeconds = progressIntervalSeconds
    }

    /// The advisory lock of one job: `(0x5354, hashtext(name))`, apart from the migration and leader keys.
    public static let lockNamespace = AdvisoryLock.jobNamespace

    /// Runs `job` once. Never throws: every outcome, database trouble included, comes back as an `Outcome`.
    /// The job reports into `progress`, which the caller may read while the run goes on.
    public func execute(_ job: any Job, settings: JobSettings, scheduledFor: Date?, trigger: RunTrigger,
                        attempt: Int = 1, dryRun: Bool = false, force: Bool = false, progress: JobProgress = JobProgress()) async -> Outcome {
        let started = Date()
        let name = settings.name
        do {
            let (locked, generation) = try await session.run { [session] c in
                (try c.query("select pg_try_advisory_lock(\(Self.lockNamespace), hashtext(\(name)))").scalar(Bool.self), session.generation)
            }
            guard locked else {
                let reason = "another run of \(name) is in progress"
                if let scheduledFor, trigger != .manual {
                    try await history.record(job: name, scheduledFor: scheduledFor, status: "skipped", reason: reason, trigger: trigger)
                }
                return Outcome(status: .skipped, runID: nil, summary: nil, reason: reason, seconds: Date().timeIntervalSince(started))
            }
            let outcome = await runLocked(job, settings: settings, scheduledFor: scheduledFor, trigger: trigger, attempt: attempt,
                                          dryRun: dryRun, force: force, started: started, progress: progress, lockGeneration: generation)
            // A broken connection has dropped the lock already; otherwise give it back for the next run.
            _ = try? await session.run { c in
                try c.query("select pg_advisory_unlock($1, hashtext($2))", [Self.lockNamespace, name]).count
            }
            return outcome
        } catch {
            logger.error("job could not run", [("job", name), ("error", "\(error)")])
            return Outcome(status: .failed, runID: nil, summary: nil, reason: "\(error)", seconds: Date().timeIntervalSince(started))
        }
    }

    /// The run itself, with the job's lock held.
    private func runLocked(_ job: any Job, settings: JobSettings, scheduledFor: Date?, trigger: RunTrigger,
                           attempt: Int, dryRun: Bool, force: Bool, started: Date, progress: JobProgress, lockGeneration: Int) async -> Outcome {
        let name = settings.name
        func elapsed() -> Double { Date().timeIntervalSince(started) }
        let id: Int64
        do {
            let interrupted = try await history.markInterrupted(job: name)
            if interrupted > 0 { logger.warning("marked interrupted runs failed", [("job", name), ("runs", String(interrupted))]) }
            guard let started = try await history.start(job: name, scheduledFor: scheduledFor, trigger: trigger, attempt: attempt, dryRun: dryRun) else {
                return Outcome(status: .skipped, runID: nil, summary: nil, reason: "this slot was already recorded by another instance", seconds: elapsed())
            }
            id = started
        } catch {
            logger.error("job could not start", [("job", name), ("error", "\(error)")])
            return Outcome(status: .failed, runID: nil, summary: nil, reason: "\(error)", seconds: elapsed())
        }
        logger.info("job started", [("job", name), ("run", String(id)), ("trigger", trigger.rawValue), ("attempt", String(attempt)),
                                    ("dry_run", String(dryRun))])
        let deadline = ContinuousClock.now + .milliseconds(Int64(Self.boundedSeconds(settings.timeoutSeconds) * 1000))
        let context = JobContext(dryRun: dryRun, database: session, logger: logger.named("job.\(name)"), settings: settings,
                                 scheduledFor: scheduledFor, runID: id, force: force, deadline: deadline,
                                 progress: progress, lockGeneration: lockGeneration)
        let reporter = JobProgressReporter(progress: progress, logger: logger, job: name, runID: id, intervalSeconds: progressIntervalSeconds)
        do {
            let summary = try await reporter.reporting {
                try await Self.withTimeout(settings.timeoutSeconds, deadline: deadline) { try await job.run(context) }
            }
            try await history.finish(id: id, succeeded: true, summary: summary.json, error: nil)
            logger.info("job succeeded", [("job", name), ("run", String(id)), ("seconds", Self.format(elapsed())), ("summary", summary.text)])
            return Outcome(status: .succeeded, runID: id, summary: summary, reason: nil, seconds: elapsed())
        } catch {
            let reason = "\(error)"
            logger.error("job failed", [("job", name), ("run", String(id)), ("seconds", Self.format(elapsed())), ("error", reason)])
            do {
                try await history.finish(id: id, succeeded: false, summary: nil, error: reason)
            } catch {
                logger.error("could not record the failure; the next run marks it interrupted", [("job", name), ("run", String(id)), ("error", "\(error)")])
            }
            return Outcome(status: .failed, runID: id, summary: nil, reason: reason, seconds: elapsed())
        }
    }

    /// Runs `body`, cancelling its task at `deadline` (`seconds` after the start): its queries are cancelled on the
    /// server, and work that honours `JobContext.deadline` and task cancellation (a job's HTTP transfers and retry
    /// waits) stops at once, so the run ends within about a second of it.
    static func withTimeout<T: Sendable>(_ seconds: Double, deadline: ContinuousClock.Instant,
                                         _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask {
                let value = try await body()
                // A body that got past its deadline (a transfer cut at it, then a quick finish) still timed out.
                if deadline <= .now { throw TimedOut(seconds: seconds) }
                return value
            }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw TimedOut(seconds: seconds)
            }
            defer { group.cancelAll() }
            do {
                guard let first = try await group.next() else { throw Stopped() }
                return first
            } catch is CancellationError {
                throw Stopped()
            }
        }
    }

    /// A timeout as a sleepable number of seconds: not a number or negative is 0, at most ten years.
    public static func boundedSeconds(_ seconds: Double) -> Double {
        guard !seconds.isNaN else { return 0 }
        return min(max(seconds, 0), 315_360_000)
    }

    public static func format(_ seconds: Double) -> String {
        let bounded = boundedSeconds(seconds)
        return String(Double(Int64(bounded * 1000)) / 1000)
    }
}

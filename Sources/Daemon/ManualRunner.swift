import Config
import FoundationEssentials
import Glibc
import Jobs
import StewardLog
import Postgres

/// Runs one `ctl run` through the scheduler's state: skipped at once while another run of the job goes on here
/// (whose running flag it leaves alone); otherwise marked running, run on a session of its own (the job lock is per
/// session, so it and a run of another instance exclude each other), counted, and marked finished.
struct ManualRunner: Sendable {
    let coordinator: Coordinator
    let makeSession: @Sendable (String) -> DatabaseSession
    let host: String
    let logger: Logger

    /// The outcome of a run that did not start.
    static func refusal(reason: String, status: JobRunner.Outcome.Status = .failed) -> JobRunner.Outcome {
        JobRunner.Outcome(status: status, runID: nil, summary: nil, reason: reason, seconds: 0)
    }

    /// Marks the run started in the scheduler's state; nil when it may start, else the skipped outcome.
    func claim(_ job: String) -> JobRunner.Outcome? {
        guard coordinator.withScheduler({ $0.startManual(job) }) else {
            let outcome = Self.refusal(reason: "another run of \(job) is in progress", status: .skipped)
            coordinator.record(job: job, outcome: outcome)
            return outcome
        }
        return nil
    }

    /// Runs a claimed job and marks it finished.
    func runClaimed(_ configured: JobCatalog.Configured, dryRun: Bool) async -> JobRunner.Outcome {
        let job = configured.settings.name
        let session = makeSession(job)
        let progress = coordinator.track(job: job)
        let outcome = await JobRunner(session: session, host: host, pid: Int(getpid()), logger: logger,
                                      progressIntervalSeconds: coordinator.settings.config[JobsConfig.progressInterval])
            .execute(configured.job, settings: configured.settings, scheduledFor: nil, trigger: .manual, dryRun: dryRun, progress: progress)
        coordinator.untrack(job: job, progress)
        await session.reset()
        coordinator.record(job: job, outcome: outcome)
        coordinator.withScheduler { $0.finished(job: job, slot: nil, attempt: 1, succeeded: outcome.status != .failed, now: Date()) }
        return outcome
    }

    /// Claims and runs `configured` here, in the calling task.
    func run(_ configured: JobCatalog.Configured, dryRun: Bool) async -> JobRunner.Outcome {
        if let skipped = claim(configured.settings.name) { return skipped }
        return await runClaimed(configured, dryRun: dryRun)
    }
}

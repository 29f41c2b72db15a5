import FoundationEssentials
import Glibc
import Jobs
import StewardLog
import Postgres
import Scheduler
import OutputText

/// Drives the scheduler's decisions while this instance leads: wakes at each slot (never more than a
/// second late), starts runs as child tasks, records skipped and missed slots, runs `ctl run` requests through the
/// same state, and on stop (woken at once, not polled) lets running jobs, scheduled or manual, finish within
/// `shutdown_timeout` before cancelling them.
struct SchedulerService: DaemonService {
    let coordinator: Coordinator
    let lifecycle: Lifecycle
    let logger: Logger
    /// For history rows of slots that do not run, and for the takeover queries.
    let session: DatabaseSession
    /// Opens a database session for a job's runs (one per job, kept for the daemon's life).
    let makeSession: @Sendable (String) -> DatabaseSession
    let host: String

    private enum Event: Sendable {
        case tick
        case finished(job: String, slot: Date?, attempt: Int, outcome: JobRunner.Outcome)
        /// A `ctl run` request; nil once the queue closed or the listener was cancelled.
        case request(ManualRun?)
        case manualFinished(ManualRun, JobRunner.Outcome)
        case shutdownDeadline
    }

    func run() async throws {
        var sessions: [String: DatabaseSession] = [:]
        var history: RunHistory { RunHistory(session: session, host: host, pid: Int(getpid())) }
        let manualRuns = coordinator.manualRuns
        let manual = ManualRunner(coordinator: coordinator, makeSession: makeSession, host: host, logger: logger)
        manualRuns.open()
        await withTaskGroup(of: Event.self) { group in
            var seenTerm = 0
            var drain = DrainState()
            group.addTask { .tick }
            group.addTask { [lifecycle] in await lifecycle.waitForStop(); return .tick }
            group.addTask { .request(await manualRuns.next()) }
            while let event = await group.next() {
                switch event {
                case .request(nil):
                    continue
                case .request(let request?):
                    group.addTask { .request(await manualRuns.next()) }
                    guard drain.acceptsRuns else { request.reply(ManualRunner.refusal(reason: "the daemon is stopping: no new runs start")); continue }
                    guard let configured = coordinator.job(named: request.job) else {
                        request.reply(ManualRunner.refusal(reason: "no job \(request.job)"))
                        continue
                    }
                    if let skipped = manual.claim(request.job) { request.reply(skipped); continue }
                    drain.runStarted()
                    group.addTask { .manualFinished(request, await manual.runClaimed(configured, dryRun: request.dryRun)) }
                    continue
                case .manualFinished(let request, let outcome):
                    request.reply(outcome)
                    if drain.runFinished() == .finish { group.cancelAll() }
                    continue
                case .finished(let job, let slot, let attempt, let outcome):
                    coordinator.record(job: job, outcome: outcome)
                    coordinator.withScheduler { $0.finished(job: job, slot: slot, attempt: attempt, succeeded: outcome.status != .failed, now: Date()) }
                    if drain.runFinished() == .finish { group.cancelAll() }
                    continue
                case .shutdownDeadline:
                    if case .cancelRuns(let running) = drain.shutdownTimeoutPassed(), running > 0 {
                        logger.warning("shutdown timeout reached: cancelling running jobs", [("running", String(running))])
                    }
                    group.cancelAll()
                    continue
                case .tick:
                    break
                }
                if lifecycle.isStopping || Task.isCancelled {
                    if case .stopAccepting(let thenFinish, let running) = drain.stopRequested() {
                        manualRuns.close { _ in ManualRunner.refusal(reason: "the daemon is stopping: no new runs start") }
                        coordinator.withScheduler { $0.lostLeadership() }
                        if thenFinish { group.cancelAll(); continue }
                        let timeout = coordinator.settings.config[DaemonConfig.shutdownTimeout]
                        logger.notice("stopping: waiting for running jobs", [("running", String(running)), ("timeout_s", JobRunner.format(timeout))])
                        group.addTask {
                            try? await Task.sleep(for: .milliseconds(Int64(JobRunner.boundedSeconds(timeout) * 1000)))
                            return .shutdownDeadline
                        }
                    }
                    continue
                }

                var actions: [SchedulerState.Action] = []
                let (leader, term) = coordinator.leadership
                if leader && term != seenTerm {
                    seenTerm = term
                    actions += await takeover(history: history)
                } else if !leader && coordinator.withScheduler({ $0.isLeader }) {
                    coordinator.withScheduler { $0.lostLeadership() }
                }
                actions += coordinator.withScheduler { $0.due(now: Date()) }
                for action in actions {
                    switch action {
                    case .record(let job, let slot, let status, let reason):
                        coordinator.recordSlot(job: job, status: status)
                        logger.log(status == .missed ? .warning : .info, "slot not run", [("job", job), ("slot", ISODate.string(slot)),
                                                                                         ("status", status.rawValue), ("reason", reason)])
                        do { try await history.record(job: job, scheduledFor: slot, status: status.rawValue, reason: reason) }
                        catch { logger.error("could not record the slot", [("job", job), ("error", "\(error)")]) }
                    case .run(let job, let slot, let trigger, let attempt):
                        guard let configured = coordinator.job(named: job) else { continue }
                        let jobSession = sessions[job] ?? makeSession(job)
                        sessions[job] = jobSession
                        let runner = JobRunner(session: jobSession, host: host, pid: Int(getpid()), logger: logger,
                                               progressIntervalSeconds: coordinator.settings.config[JobsConfig.progressInterval])
                        drain.runStarted()
                        let runTrigger: RunTrigger = switch trigger { case .schedule: .schedule; case .catchUp: .catchUp; case .retry: .retry }
                        let progress = coordinator.track(job: job)
                        group.addTask { [coordinator] in
                            let outcome = await runner.execute(configured.job, settings: configured.settings, scheduledFor: slot,
                                                               trigger: runTrigger, attempt: attempt, progress: progress)
                            coordinator.untrack(job: job, progress)
                            return .finished(job: job, slot: slot, attempt: attempt, outcome: outcome)
                        }
                    }
                }
                // Sleeps until the next slot or retry, or until leadership, settings or the runs change (at most a
                // minute, so a wall clock set forward is noticed); never a poll.
                let seen = coordinator.statusChanges.generation
                let wake = coordinator.withScheduler { $0.nextWake() }
                let delay = max(0.001, min(60, (wake ?? .distantFuture).timeIntervalSinceNow))
                group.addTask { [coordinator] in
                    await coordinator.statusChanges.wait(beyond: seen, timeout: delay)
                    return .tick
                }
            }
        }
        manualRuns.close { _ in ManualRunner.refusal(reason: "the daemon is stopping: no new runs start") }
        for session in sessions.values { await session.reset() }
    }

    /// On becoming leader: runs left `running` by a dead instance are marked failed, missed slots are
    /// recorded (or caught up), and pauses are read back.
    private func takeover(history: RunHistory) async -> [SchedulerState.Action] {
        let jobs = coordinator.settings.enabledJobs.map(\.settings.name)
        do {
            // Runs left "running" by an instance that died: closed as failed now, for each job nobody is running.
            for job in jobs {
                let swept = try await history.sweepInterrupted(job: job)
                if swept > 0 { logger.warning("marked interrupted runs failed", [("job", job), ("runs", String(swept))]) }
            }
            var lastSlots: [String: Date] = [:]
            for job in jobs { lastSlots[job] = try await history.lastSlot(job: job) }
            let paused = try await history.pausedJobs()
            let last = try await history.lastRuns()
            coordinator.seedLastSuccess(last.compactMapValues { $0.lastSuccess?.finishedAt })
            let actions = coordinator.withScheduler { $0.becameLeader(lastSlots: lastSlots, paused: paused, now: Date()) }
            logger.info("scheduling", jobs.map { job in
                (job, coordinator.withScheduler { $0.nextSlot(job) }.map(ISODate.string) ?? "-")
            })
            return actions
        } catch {
            logger.error("could not read the history at takeover; scheduling from now", [("error", "\(error)")])
            return coordinator.withScheduler { $0.becameLeader(lastSlots: [:], paused: [], now: Date()) }
        }
    }
}

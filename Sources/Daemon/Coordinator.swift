import FoundationEssentials
import Jobs
import Scheduler
import Synchronization

/// What the daemon's services share: leadership, the scheduler's decisions, the jobs and their counters.
/// One lock around a value; services read and change it through small methods.
public final class Coordinator: Sendable {
    struct State {
        var settings: DaemonSettings
        var scheduler: SchedulerState
        var isLeader = false
        /// Increases each time this instance becomes leader.
        var term = 0
        var leaderSince: Date?
        var runs: [String: [String: Int]] = [:]
        var missed: [String: Int] = [:]
        var lastSuccess: [String: Date] = [:]
        var lastDuration: [String: Double] = [:]
        var lastStatus: [String: String] = [:]
        var lastSummary: [String: [(String, Int64)]] = [:]
        /// Failed attempts of each job since its last success here.
        var consecutiveFailures: [String: Int] = [:]
        var schemaDifferences = 0
        /// Known weaknesses of the app schema verify advises about (not differences).
        var schemaAdvisories = 0
        var pendingMigrations = 0
        var databaseReachable = false
        /// The progress of each job running here now.
        var progress: [String: JobProgress] = [:]
    }

    let state: Mutex<State>
    public let startedAt = Date()
    /// `ctl run` requests on their way to the scheduler.
    let manualRuns = ManualRunQueue()
    /// Each job's last run, for `ctl jobs` without a query; read again after runs end here.
    let lastRuns = LastRunCache()
    /// Signalled when what the status line shows may have changed: leadership, reachability, the scheduler's runs.
    let statusChanges = ChangeSignal()

    init(settings: DaemonSettings) {
        state = Mutex(State(settings: settings, scheduler: SchedulerState(jobs: settings.enabledJobs.map(\.settings.timing))))
    }

    var settings: DaemonSettings { state.withLock { $0.settings } }

    var leadership: (isLeader: Bool, term: Int) { state.withLock { ($0.isLeader, $0.term) } }

    func setLeader(_ leader: Bool) {
        state.withLock { s in
            if leader && !s.isLeader { s.term += 1; s.leaderSince = Date() }
            if !leader { s.leaderSince = nil }
            s.isLeader = leader
        }
        statusChanges.signal()
    }

    func setDatabaseReachable(_ reachable: Bool) {
        let changed = state.withLock { s in
            defer { s.databaseReachable = reachable }
            return s.databaseReachable != reachable
        }
        if changed { statusChanges.signal() }
    }

    /// Swaps in reloaded settings; the scheduler keeps its running flags and pauses.
    func apply(_ settings: DaemonSettings) {
        state.withLock { s in
            s.settings = settings
            s.scheduler.update(jobs: settings.enabledJobs.map(\.settings.timing), now: Date())
        }
        statusChanges.signal()
    }

    func withScheduler<T>(_ body: (inout SchedulerState) -> T) -> T {
        let (result, changed) = state.withLock { s in
            let before = s.scheduler.runningJobs.count
            let result = body(&s.scheduler)
            return (result, s.scheduler.runningJobs.count != before)
        }
        if changed { statusChanges.signal() }
        return result
    }

    func job(named name: String) -> JobCatalog.Configured? { state.withLock { s in s.settings.jobs.first { $0.settings.name == name } } }

    /// A new progress for a run of `job` starting here, shown by `ctl jobs` and the metrics until `untrack`.
    func track(job: String) -> JobProgress {
        let progress = JobProgress()
        state.withLock { $0.progress[job] = progress }
        statusChanges.signal()   // the status line shows it
        return progress
    }

    /// The run that reported into `progress` ended.
    func untrack(job: String, _ progress: JobProgress) {
        state.withLock { s in if s.progress[job] === progress { s.progress[job] = nil } }
        statusChanges.signal()
    }

    /// Counts a finished attempt for metrics and status.
    func record(job: String, outcome: JobRunner.Outcome) {
        if outcome.runID != nil { lastRuns.invalidate() }
        state.withLock { s in
            s.runs[job, default: [:]][outcome.status.rawValue, default: 0] += 1
            s.lastStatus[job] = outcome.status.rawValue
            if outcome.status != .skipped { s.lastDuration[job] = outcome.seconds }
            if outcome.status == .succeeded { s.lastSuccess[job] = Date() }
            if outcome.status == .succeeded { s.consecutiveFailures[job] = 0 }
            if outcome.status == .failed { s.consecutiveFailures[job, default: 0] += 1 }
            if let summary = outcome.summary { s.lastSummary[job] = summary.counts }
        }
    }

    func recordSlot(job: String, status: SchedulerState.SlotStatus) {
        state.withLock { s in
            if status == .missed { s.missed[job, default: 0] += 1 }
            s.runs[job, default: [:]][status.rawValue, default: 0] += 1
        }
    }

    func setSchema(differences: Int, advisories: Int, pending: Int) {
        state.withLock { $0.schemaDifferences = differences; $0.schemaAdvisories = advisories; $0.pendingMigrations = pending }
    }

    func seedLastSuccess(_ values: [String: Date]) {
        state.withLock { s in for (job, date) in values where s.lastSuccess[job] == nil { s.lastSuccess[job] = date } }
    }
}

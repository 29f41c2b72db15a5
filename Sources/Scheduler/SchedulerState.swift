import FoundationEssentials

/// The scheduler's decisions as a value: given the time and what happened, it says which slots to run,
/// skip or record as missed. No clock, no I/O: the service that drives it performs the actions.
public struct SchedulerState: Sendable {
    /// Something the driving service must do.
    public enum Action: Sendable, Equatable {
        /// Start `job` for `slot`.
        case run(job: String, slot: Date, trigger: Trigger, attempt: Int)
        /// Write a history row for a slot that does not run.
        case record(job: String, slot: Date, status: SlotStatus, reason: String)
    }

    /// Why a run starts.
    public enum Trigger: String, Sendable { case schedule, catchUp = "catch-up", retry }

    /// How a slot that did not run is recorded.
    public enum SlotStatus: String, Sendable { case skipped, missed }

    struct Entry: Sendable {
        var timing: JobTiming
        var nextSlot: Date?
        var running = false
        var paused = false
        var retry: (at: Date, slot: Date, attempt: Int)?
    }

    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    /// Manual runs of jobs that have no schedule here (disabled ones).
    private var unscheduledRunning: Set<String> = []
    /// True while this instance leads; slots come due only then.
    public private(set) var isLeader = false

    public init(jobs: [JobTiming]) { update(jobs: jobs, now: nil) }

    /// Replaces the job set (on reload): running flags and pauses stay; changed schedules get a new next slot.
    public mutating func update(jobs: [JobTiming], now: Date?) {
        var next: [String: Entry] = [:]
        for timing in jobs {
            var entry = entries[timing.name] ?? Entry(timing: timing)
            let scheduleChanged = entry.timing.schedule.description != timing.schedule.description
            entry.timing = timing
            if isLeader, let now, scheduleChanged || entry.nextSlot == nil { entry.nextSlot = timing.schedule.next(after: now) }
            next[timing.name] = entry
        }
        entries = next
        order = jobs.map(\.name)
    }

    /// Takes over scheduling: slots after each job's `lastSlots` entry up to `now` were missed; under
    /// `catch-up` the latest of them runs once. Jobs never recorded start from now.
    public mutating func becameLeader(lastSlots: [String: Date], paused: Set<String>, now: Date) -> [Action] {
        isLeader = true
        var actions: [Action] = []
        for name in order {
            guard var entry = entries[name] else { continue }
            entry.paused = paused.contains(name)
            entry.retry = nil
            var missed = lastSlots[name].map { entry.timing.schedule.slots(after: $0, upTo: now) } ?? []
            if entry.timing.missed == .catchUp, !entry.paused, !entry.running, let latest = missed.popLast() {
                actions += missed.map { .record(job: name, slot: $0, status: .missed, reason: "no instance was leading at the time") }
                actions.append(.run(job: name, slot: latest, trigger: .catchUp, attempt: 1))
                entry.running = true
            } else {
                actions += missed.map { .record(job: name, slot: $0, status: .missed, reason: "no instance was leading at the time") }
            }
            entry.nextSlot = entry.timing.schedule.next(after: now)
            entries[name] = entry
        }
        return actions
    }

    /// Stops scheduling (the leader lock is gone); runs already started finish on their own.
    public mutating func lostLeadership() {
        isLeader = false
        for name in order { entries[name]?.retry = nil }
    }

    /// Pauses or resumes a job: its slots are recorded as skipped while paused.
    public mutating func setPaused(_ job: String, _ paused: Bool) { entries[job]?.paused = paused }

    public func isPaused(_ job: String) -> Bool { entries[job]?.paused ?? false }
    public func isRunning(_ job: String) -> Bool { entries[job]?.running ?? unscheduledRunning.contains(job) }

    /// The jobs with a run going on here, scheduled or manual.
    public var runningJobs: Set<String> { unscheduledRunning.union(entries.filter { $0.value.running }.keys) }

    /// Marks a run started outside the schedule (run-now), so a slot meanwhile is skipped.
    public mutating func markRunning(_ job: String) { entries[job]?.running = true }

    /// Starts a manual run (`ctl run`) if no run of `job` is going on here: true when it may start (it is then marked
    /// running until `finished`), false when another run is under way (whose running flag stays as it is).
    public mutating func startManual(_ job: String) -> Bool {
        guard !isRunning(job) else { return false }
        if entries[job] != nil { entries[job]?.running = true } else { unscheduledRunning.insert(job) }
        return true
    }

    /// Everything due at `now`: slots to run, slots to skip (paused, still running), slots overslept (missed), retries.
    public mutating func due(now: Date) -> [Action] {
        guard isLeader else { return [] }
        var actions: [Action] = []
        for name in order {
            guard var entry = entries[name] else { continue }
            if let retry = entry.retry, retry.at <= now, !entry.running {
                entry.retry = nil
                if entry.paused {
                    actions.append(.record(job: name, slot: retry.slot, status: .skipped, reason: "retry \(retry.attempt) not run: the job is paused"))
                } else {
                    actions.append(.run(job: name, slot: retry.slot, trigger: .retry, attempt: retry.attempt))
                    entry.running = true
                }
            }
            var overdue: [Date] = []
            while let slot = entry.nextSlot, slot <= now {
                overdue.append(slot)
                entry.nextSlot = entry.timing.schedule.next(after: slot)
            }
            if let slot = overdue.popLast() {
                actions += overdue.map { .record(job: name, slot: $0, status: .missed, reason: "the scheduler was not awake at the time (suspended or overloaded)") }
                if entry.paused {
                    actions.append(.record(job: name, slot: slot, status: .skipped, reason: "the job is paused"))
                } else if entry.running {
                    actions.append(.record(job: name, slot: slot, status: .skipped, reason: "the previous run is still running"))
                } else {
                    entry.retry = nil
                    actions.append(.run(job: name, slot: slot, trigger: .schedule, attempt: 1))
                    entry.running = true
                }
            }
            entries[name] = entry
        }
        return actions
    }

    /// A run ended; a failed scheduled run is retried after the backoff while attempts remain.
    public mutating func finished(job: String, slot: Date?, attempt: Int, succeeded: Bool, now: Date) {
        unscheduledRunning.remove(job)
        guard var entry = entries[job] else { return }
        entry.running = false
        if !succeeded, isLeader, let slot, attempt <= entry.timing.retries {
            entry.retry = (now.addingTimeInterval(entry.timing.retryDelay(attempt: attempt + 1)), slot, attempt + 1)
        }
        entries[job] = entry
    }

    /// The next slot of `job` (nil when not leading or unknown).
    public func nextSlot(_ job: String) -> Date? { isLeader ? entries[job]?.nextSlot : nil }

    /// The pending retry of `job`, if any.
    public func pendingRetry(_ job: String) -> Date? { entries[job]?.retry?.at }

    /// When something next comes due (nil when nothing is scheduled).
    public func nextWake() -> Date? {
        guard isLeader else { return nil }
        return entries.values.flatMap { [$0.nextSlot, $0.retry?.at].compactMap { $0 } }.min()
    }
}

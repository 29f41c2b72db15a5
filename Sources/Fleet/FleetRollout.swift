/// What a rollout does next, as a state machine fed with each target's outcome: stages in order, at most
/// `parallel` targets at once inside a stage; a failure stops the rollout before the next stage and, unless
/// `continueOnError`, before any further target of its own stage (the ones already running finish). An interrupt
/// (the operator's Ctrl-C) starts nothing more, anywhere; the running targets finish.
public struct FleetRollout: Sendable {
    /// How a target's run ended, as far as the rollout cares.
    public enum Outcome: Sendable, Equatable {
        case succeeded
        /// The work failed at the target (a file, a lock, a job); stops the rollout.
        case failed
        /// The target could not be reached (or its password was refused); stops the rollout as a failure does.
        case unreachable

        var stops: Bool { self != .succeeded }
    }

    public enum Action: Sendable, Equatable {
        /// Start the target's run now.
        case start(FleetTarget)
        /// Wait for a running target to finish, then ask again.
        case wait
        /// Nothing more will start; `notStarted` lists what the rollout left untouched.
        case finished
    }

    public let plan: FleetPlan
    public let parallel: Int
    public let continueOnError: Bool

    private var stageIndex = 0
    private var nextInStage = 0
    private var running: Set<String> = []
    private var failedInStage = false
    private var stopped = false
    /// Whether `interrupt()` was called.
    public private(set) var interrupted = false
    public private(set) var notStarted: [FleetTarget] = []

    public init(plan: FleetPlan, parallel: Int, continueOnError: Bool) {
        self.plan = plan
        self.parallel = max(1, parallel)
        self.continueOnError = continueOnError
    }

    /// Whether a failure ended the rollout early (some targets were left untouched).
    public var stoppedEarly: Bool { !notStarted.isEmpty }

    /// The next thing to do.
    public mutating func next() -> Action {
        while stageIndex < plan.stages.count {
            let stage = plan.stages[stageIndex]
            let haltStage = interrupted || (failedInStage && !continueOnError)
            if !haltStage, nextInStage < stage.targets.count {
                guard running.count < parallel else { return .wait }
                let target = stage.targets[nextInStage]
                nextInStage += 1
                running.insert(target.name)
                return .start(target)
            }
            guard running.isEmpty else { return .wait }
            // The stage is over: after a failure or an interrupt, nothing further starts, in this stage or the next ones.
            if failedInStage || interrupted {
                notStarted = Array(stage.targets[nextInStage...]) + plan.stages[(stageIndex + 1)...].flatMap(\.targets)
                stageIndex = plan.stages.count
                stopped = true
                return .finished
            }
            stageIndex += 1
            nextInStage = 0
        }
        return .finished
    }

    /// Starts no further target; those running finish, the rest are left untouched (`notStarted`).
    public mutating func interrupt() { interrupted = true }

    /// Records that `target`'s run ended with `outcome`.
    public mutating func finished(_ target: String, _ outcome: Outcome) {
        running.remove(target)
        if outcome.stops { failedInStage = true }
    }
}

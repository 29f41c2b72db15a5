/// Runs a rollout: the targets' work in a task group of at most `parallel` children, in the order and with the
/// stops `FleetRollout` decides. The work itself does its blocking calls through `BlockingExecutor`.
public enum FleetRunner {
    /// One target's result: how it ended for the rollout, and what the work reports.
    public struct Result<Report: Sendable>: Sendable {
        public let target: FleetTarget
        public let outcome: FleetRollout.Outcome
        public let report: Report
        public let seconds: Double
    }

    /// Where a rollout is, after each target: for the progress line on standard error.
    public struct Progress: Sendable {
        public let done: Int
        public let total: Int
        public let failed: Int
        public let last: String
        public let lastOutcome: FleetRollout.Outcome
    }

    /// The results in plan order, the targets a failure or an interrupt left untouched, and whether an interrupt
    /// did (`stopRequested` is asked before each start: true once the operator asked to stop).
    public static func run<Report: Sendable>(
        _ plan: FleetPlan, parallel: Int, continueOnError: Bool,
        stopRequested: @escaping @Sendable () -> Bool = { false },
        work: @escaping @Sendable (FleetTarget) async -> (FleetRollout.Outcome, Report),
        progress: (Progress) -> Void = { _ in }
    ) async -> (results: [Result<Report>], notStarted: [FleetTarget], interrupted: Bool) {
        var rollout = FleetRollout(plan: plan, parallel: parallel, continueOnError: continueOnError)
        var results: [String: Result<Report>] = [:]
        var failed = 0
        let total = plan.targets.count
        await withTaskGroup(of: Result<Report>.self) { group in
            loop: while true {
                if !rollout.interrupted && stopRequested() { rollout.interrupt() }
                switch rollout.next() {
                case .start(let target):
                    group.addTask {
                        let started = ContinuousClock.now
                        let (outcome, report) = await work(target)
                        let elapsed = ContinuousClock.now - started
                        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                        return Result(target: target, outcome: outcome, report: report, seconds: seconds)
                    }
                case .wait:
                    guard let result = await group.next() else { break loop }
                    rollout.finished(result.target.name, result.outcome)
                    results[result.target.name] = result
                    if result.outcome != .succeeded { failed += 1 }
                    progress(Progress(done: results.count, total: total, failed: failed, last: result.target.name, lastOutcome: result.outcome))
                case .finished:
                    break loop
                }
            }
        }
        let notStarted = rollout.notStarted
        return (plan.targets.compactMap { results[$0.name] }, notStarted, rollout.interrupted && !notStarted.isEmpty)
    }
}

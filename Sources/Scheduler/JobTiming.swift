/// What the scheduler needs to know about a job: when it runs and what to do when a run fails or a slot is missed.
public struct JobTiming: Sendable {
    /// What happens to slots that passed while no instance was leading.
    public enum MissedPolicy: String, Sendable {
        /// Record them as missed.
        case skip
        /// Record them as missed, except the latest, which runs once.
        case catchUp = "catch-up"
    }

    public let name: String
    public let schedule: Schedule
    public let retries: Int
    public let retryBackoffSeconds: Double
    public let missed: MissedPolicy

    public init(name: String, schedule: Schedule, retries: Int, retryBackoffSeconds: Double, missed: MissedPolicy) {
        self.name = name
        self.schedule = schedule
        self.retries = retries
        self.retryBackoffSeconds = retryBackoffSeconds
        self.missed = missed
    }

    /// Seconds before retry `attempt` (2, 3, …): the backoff doubled each time, at most an hour.
    public func retryDelay(attempt: Int) -> Double {
        min(retryBackoffSeconds * Double(1 << min(attempt - 2, 20)), 3600)
    }
}

import Jobs

/// A `ctl run` handed to the scheduler: the job, the flags, and where its outcome goes.
struct ManualRun: Sendable {
    let job: String
    let dryRun: Bool
    /// Called once with the outcome.
    let reply: @Sendable (JobRunner.Outcome) -> Void
}

/// Why a run happened, as recorded in `steward.job_runs.trigger`.
public enum RunTrigger: String, Sendable {
    /// Its slot came.
    case schedule
    /// The latest slot missed while no instance was leading, run once (`missed = catch-up`).
    case catchUp = "catch-up"
    /// A failed run tried again.
    case retry
    /// `steward job run` or `run` on the control socket.
    case manual
}

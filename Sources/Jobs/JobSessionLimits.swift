/// The session settings of every database connection that runs jobs, whichever command runs them (`steward run`,
/// `steward job run`): no statement runs past `statement_timeout`, no lock is waited for past `lock_timeout`.
public enum JobSessionLimits {
    public static let settings: [(String, String)] = [("lock_timeout", "10s"), ("statement_timeout", "5min")]
}

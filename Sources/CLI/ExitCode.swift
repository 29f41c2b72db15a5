/// The exit codes scripts can test; stable across versions.
public enum ExitCode: Int32, Sendable {
    case ok = 0
    /// The command failed (a statement, a lock, a file).
    case failure = 1
    /// Drift or differences found (status, verify, adopt).
    case drift = 2
    /// The command line was wrong.
    case usage = 64
    /// The database could not be reached.
    case unavailable = 69
    /// Another run holds the lock; try again later.
    case temporaryFailure = 75
    /// The configuration is wrong.
    case config = 78
    /// Stopped by the operator (SIGINT or SIGTERM) before the work was done; what finished is reported.
    case interrupted = 130
}

import Postgres

/// Where a row of `steward.job_runs` stands: the values its `status` check constraint allows.
public enum RunStatus: String, Sendable, CaseIterable, PostgresDecodable, PostgresBindable, CustomStringConvertible {
    case running, succeeded, failed, skipped, missed

    public var description: String { rawValue }
}

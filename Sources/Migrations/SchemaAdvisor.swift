import Postgres

/// What an application module knows about its schema beyond the migration files: advice and enforcement lines.
public protocol SchemaAdvisor: Sendable {
    /// Known weaknesses the live database still has, one sentence each; informational, never drift.
    func advisories(_ connection: Connection) throws -> [String]
    /// What the live schema enforces, one line each.
    func enforcement(_ connection: Connection) throws -> [String]
}

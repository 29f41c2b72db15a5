/// One check: its name, level, why it matters, the fix, and the one catalog query that finds it.
///
/// The query takes the exposed schemas as `$1::text[]` and returns rows of (schema, object, detail), optionally with a
/// fourth column, a level (`ERROR`, `WARN`, `INFO`) for that row where it differs from the check's (a trigger function
/// holding EXECUTE is worth naming, not worth a warning).
public struct AdvisorCheck: Sendable {
    public let name: String
    public let level: AdvisorLevel
    public let why: String
    public let fix: String
    /// The opt-in migration folder that fixes it, when Steward ships one.
    public let migration: String?
    let sql: String

    init(_ name: String, _ level: AdvisorLevel, why: String, fix: String, migration: String? = nil, sql: String) {
        self.name = name
        self.level = level
        self.why = why
        self.fix = fix
        self.migration = migration
        self.sql = sql
    }
}

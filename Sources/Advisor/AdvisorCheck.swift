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
    /// The opt-in folder that fixes it, by the object a finding names (`schema.object`): only objects whose folder's
    /// files change that very object (a folder that fixes `public.User` says nothing of another table).
    public let fixedBy: [String: String]
    let sql: String

    init(_ name: String, _ level: AdvisorLevel, why: String, fix: String, fixedBy: [String: String] = [:], sql: String) {
        self.name = name
        self.level = level
        self.why = why
        self.fix = fix
        self.fixedBy = fixedBy
        self.sql = sql
    }
}

import Postgres

/// Why a migration command stopped; each case maps to one documented exit code.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// A migration file is unusable: bad name, bad UTF-8, bad directive, forbidden statement.
    case invalidFile(String, line: Int?, String)
    /// The migrations folder is missing or unreadable.
    case source(String)
    /// A statement failed; `outcome` says what was left behind (rolled back, or the statements before it).
    case statementFailed(file: String, location: SourceLocation?, PostgresError, outcome: String)
    /// Applied files and the files on disk disagree (changed, missing, out of order).
    case drift([String])
    /// Another migrator holds the lock past the wait limit.
    case lockTimeout(waitedSeconds: Double, holder: String?)
    /// Adoption found differences between the live catalog and the files.
    case adoptionRefused([String])
    /// The database could not be used (unreachable, pooler, permission).
    case database(PostgresError)
    /// The lint found statements that would hold a lock the app waits behind for long, and no file allows them.
    case lintRefused([String])
    /// The shadow database could not be made or the files could not be applied to it (what to do is in the text).
    case shadow(String)
    /// Pending statements need powers the migrating role lacks (found before anything ran); one line each.
    case privilegeMissing([String])

    public var description: String {
        switch self {
        case .invalidFile(let file, let line, let message):
            return "\(file)\(line.map { ":\($0)" } ?? ""): \(message)"
        case .source(let message):
            return message
        case .statementFailed(let file, let location, let error, let outcome):
            var text = "\(location?.description ?? file): \(error)"
            if let context = error.context { text += "\n  context: \(context.replacing("\n", with: "\n  "))" }
            return text + "\n  " + outcome
        case .drift(let problems):
            return "the applied migrations and the files disagree:\n" + problems.map { "  - " + $0 }.joined(separator: "\n")
        case .lockTimeout(let waited, let holder):
            return "another migration run holds the lock; gave up after \(Int(waited)) s"
                + (holder.map { " (held by \($0))" } ?? "")
        case .adoptionRefused(let differences):
            return "the database does not match the migration files; nothing was recorded:\n"
                + differences.map { "  - " + $0 }.joined(separator: "\n")
        case .privilegeMissing(let problems):
            return "nothing was applied: these statements need powers the migrating role does not have on this database:\n"
                + problems.map { "  - " + $0 }.joined(separator: "\n")
                + "\n  run them as the table's owner (or on a database with supautils, as Supabase's is), then steward migrate --adopt"
        case .shadow(let message):
            return message
        case .lintRefused(let findings):
            return "nothing was applied: the lint found statements that would block the app on a live database:\n"
                + findings.map { "  - " + $0 }.joined(separator: "\n")
                + "\n  write them the safe way shown, or allow a rule in its file on a line of its own: -- steward:allow <rule> (see steward lint)"
        case .database(let error):
            return error.description + (error.hint.map { error.description.contains($0) ? "" : " (hint: \($0))" } ?? "")
        }
    }
}

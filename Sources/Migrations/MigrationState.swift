import Postgres
import StewardDatabase

/// What a run knows of the database before it decides anything: Steward's bookkeeping version, its history and
/// the Supabase CLI's table, read in the two round trips that also probe and reset the session.
struct MigrationState {
    /// The newest version in `steward.bookkeeping_version`; nil when the table does not exist.
    let bookkeepingVersion: Int?
    /// `steward.schema_migrations`, in version order; empty when it does not exist.
    let entries: [HistoryStore.Entry]
    /// True when `supabase_migrations.schema_migrations` exists.
    let cliTableExists: Bool
    /// The CLI's rows when this run keeps the CLI's history (empty when its table does not exist yet), else nil.
    let cliRows: [SupabaseCLIHistory.Row]?

    /// True when Steward's own schema is at the version this Steward knows (nothing to create or upgrade).
    var isCurrent: Bool { bookkeepingVersion == StewardSchema.versions.count }

    /// Which of the tables exist (and the CLI table's columns): asked beside the session probe's first statement.
    static let catalogQuery: PostgresQuery = """
        select to_regclass('steward.bookkeeping_version') is not null, to_regclass('steward.schema_migrations') is not null,
               to_regclass('supabase_migrations.schema_migrations') is not null,
               array(\(SupabaseCLIHistory.columnsQuery))
        """

    /// Refuses a transaction-mode pooler, runs `reset` (the session's reset to Steward's settings) and reads the
    /// state, all in two round trips; `keepsCLIHistory` says, given whether the CLI's table exists, whether its rows are read.
    static func read(_ connection: Connection, reset: [PostgresQuery], keepsCLIHistory: (Bool) -> Bool) throws -> MigrationState {
        var found: (bookkeeping: Bool, history: Bool, cli: Bool, cliColumns: [String]) = (false, false, false, [])
        let answers = try connection.requireSessionState(alongside: [catalogQuery]) { catalog in
            let row = try catalog[0].firstRow()
            found = (try row.decode(Bool.self, at: 0), try row.decode(Bool.self, at: 1), try row.decode(Bool.self, at: 2),
                     try row.decode([String].self, at: 3))
            var reads = reset
            if found.bookkeeping { reads.append("select coalesce(max(version), 0) from steward.bookkeeping_version") }
            if found.history { reads.append(HistoryStore.entriesQuery) }
            if found.cli && keepsCLIHistory(true) { reads.append(SupabaseCLIHistory.rowsQuery(columns: Set(found.cliColumns))) }
            return reads
        }
        var results = answers.then.dropFirst(reset.count)
        let version = found.bookkeeping ? try results.removeFirst().scalar(Int.self) : nil
        let entries = found.history ? try HistoryStore.entries(results.removeFirst()) : []
        let keeps = keepsCLIHistory(found.cli)
        let cliRows = found.cli && keeps ? try SupabaseCLIHistory.rows(results.removeFirst()) : (keeps ? [] : nil)
        return MigrationState(bookkeepingVersion: version, entries: entries, cliTableExists: found.cli, cliRows: cliRows)
    }
}

import Jobs
import Postgres

/// Copies the older tutorial's `User` rows into `public.profiles`: fills only empty fields, never overwrites, never deletes.
///
/// Everything happens in the database: the rows are classified into a temporary table by one statement, counted
/// there, and imported by `insert … select` from it; the process reads back only the counts and a few examples of
/// each skip reason, so its memory does not grow with the table.
///
/// The import commits in batches of at most `batchRows` profiles and about `batchSeconds`: a profile it fills is
/// row-locked only until its batch commits, so a user saving their profile meanwhile waits one batch at most, not
/// the whole import (which at millions of rows is longer than the app's statement timeout).
public struct LegacyUserImport: Sendable {
    public let schema: String, table: String, userIDColumn: String, nameColumn: String, emailColumn: String
    /// The most profiles one transaction fills.
    public let batchRows: Int
    /// A transaction takes no further statement once it has been open this long (it commits after the statement running then).
    public let batchSeconds: Double

    public init(schema: String, table: String, userIDColumn: String, nameColumn: String, emailColumn: String,
                batchRows: Int = 1000, batchSeconds: Double = 1) {
        (self.schema, self.table, self.userIDColumn, self.nameColumn, self.emailColumn) = (schema, table, userIDColumn, nameColumn, emailColumn)
        (self.batchRows, self.batchSeconds) = (max(1, batchRows), batchSeconds)
    }

    /// Why a row was not imported: the checks of each row on its own, in the order they are made, then
    /// `conflicting_duplicates` (rows of one user that passed those checks but hold different names).
    public static let skipReasons = ["not_uuid", "no_auth_user", "email_missing", "email_differs", "conflicting_duplicates"]

    /// Every outcome a row can have; each row of the table is counted under exactly one. `identical_duplicates` are
    /// the further rows of a user whose rows all hold the same name: the first counts as `imported` (or `already_there`).
    public static let outcomes = ["imported", "already_there", "identical_duplicates"] + skipReasons

    /// Examples of each skip reason read back for the log (rows, or users for `conflicting_duplicates`).
    public static let examplesPerReason = 20

    /// One skipped row (or, for `conflicting_duplicates`, one user with all their rows) named in the log.
    public struct Skipped: Sendable, Equatable {
        /// The legacy user id as written (at most 80 characters), or the user's id for `conflicting_duplicates`.
        public let userID: String
        public let reason: String
        /// The rows this stands for: 1, or the user's rows for `conflicting_duplicates`.
        public let rows: Int64

        public init(userID: String, reason: String, rows: Int64) { (self.userID, self.reason, self.rows) = (userID, reason, rows) }
    }

    /// Rows counted by outcome (every outcome in `outcomes`), and the first few skipped of each reason for the log.
    public struct Outcome: Sendable {
        public var counts: [String: Int64] = [:]
        /// Users whose rows are counted under `conflicting_duplicates`.
        public var conflictingUsers: Int64 = 0
        /// At most `examplesPerReason` of each skip reason, in the table's order (by user id for conflicts).
        public var skipped: [Skipped] = []

        /// Transactions that filled profiles, each committed before the next began (0 in a dry run).
        public var transactions = 0
        /// The longest of them, from `begin` to the end of `commit`.
        public var longestTransaction: Duration = .zero

        /// Every row of the table (the counts add up to it).
        public var rows: Int64 { counts.values.reduce(0, +) }
    }

    /// The most profiles one statement fills: a transaction of more rows is several statements, so it can stop at
    /// `batchSeconds` between them.
    public static let rowsPerStatement = 1000

    /// Classifies every row in one statement into a temporary table of the session, then (unless `dryRun`) fills
    /// the profiles in transactions of at most `batchRows` rows and about `batchSeconds`, each committed on its own;
    /// `progress` goes through the phases `classifying` and `importing` (done of the profiles to fill, moved at
    /// each commit). A run stopped part way keeps the batches it committed; the next run classifies again, finds
    /// those profiles named (`already_there`) and fills the rest.
    public func run(_ c: Connection, dryRun: Bool, progress: JobProgress = JobProgress()) throws -> Outcome {
        let t = try SQLIdentifier(schema, table)
        let uid = try SQLIdentifier(userIDColumn), name = try SQLIdentifier(nameColumn), email = try SQLIdentifier(emailColumn)
        // A row is checked on its own first (id, auth user, email: a NULL email cannot confirm the user, so it is
        // skipped like one that differs). The rows of one user that pass are one group: different names (NULL
        // counting as a value) leave the choice to a person, so none is imported; the same name is imported once.
        // Names are compared byte for byte (collate "C"): a case-insensitive collation on the column must not make
        // "Ann" and "ann" one name and import either.
        // The windows are unordered for the group's min, max and counts (an ordered window would count running).
        // `typed` is materialized so the pattern runs once a row, not again in each join and the sort (half the time at 2M rows).
        let classified: PostgresQuery = """
            with rows as (
              select l.ctid as row_ref, l.\(uid)::text as user_id, l.\(name)::text collate "C" as name, l.\(email)::text as email from \(t) l),
            typed as materialized (
              select r.*, case when r.user_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then r.user_id::uuid end as id from rows r),
            checked as (
              select t.row_ref, t.user_id, t.id, t.name, p.full_name is not null as named,
                     case when t.id is null then 'not_uuid'
                          when u.id is null then 'no_auth_user'
                          when t.email is null then 'email_missing'
                          when lower(t.email) is distinct from lower(u.email) then 'email_differs' end as skip
              from typed t left join auth.users u on u.id = t.id left join public.profiles p on p.id = t.id),
            grouped as (
              select c.*, row_number() over (partition by c.skip, c.id order by c.row_ref) as nth,
                     min(c.name) over g is distinct from max(c.name) over g or count(c.name) over g not in (0, count(*) over g) as conflict
              from checked c window g as (partition by c.skip, c.id))
            select row_ref, user_id, id, name,
                   case when skip is not null then skip
                        when conflict then 'conflicting_duplicates'
                        when nth > 1 then 'identical_duplicates'
                        when named or name is null then 'already_there'
                        else 'imported' end as outcome
            from grouped
            """
        let rowReasons = Self.skipReasons.filter { $0 != "conflicting_duplicates" }
        let limit = Int64(Self.examplesPerReason)
        // Only a bounded number of rows comes back: the first of each per-row reason, and the first users with
        // conflicting rows (named by their uuid, so ids written in upper and lower case are one user).
        let examples: PostgresQuery = """
            select outcome, left(coalesce(shown, ''), 80), rows from (
              select outcome, user_id as shown, 1::bigint as rows, row_number() over (partition by outcome order by row_ref) as nth, null::uuid as id, row_ref
              from steward_legacy_rows where outcome = any(\(rowReasons))
              union all
              select 'conflicting_duplicates', id::text, count(*), row_number() over (order by id), id, null
              from steward_legacy_rows where outcome = 'conflicting_duplicates' group by id) e
            where nth <= \(limit) order by outcome, id, row_ref
            """
        // The working tables belong to the session, not to a transaction: the batches commit one by one. A session
        // kept between runs (the daemon's) may hold them from a run that failed part way, so they are made anew.
        try c.execute("drop table if exists pg_temp.steward_legacy_rows, pg_temp.steward_legacy_todo")
        defer { if c.isOpen, c.transactionStatus == .idle { _ = try? c.execute("drop table if exists pg_temp.steward_legacy_rows, pg_temp.steward_legacy_todo") } }
        var outcome = Outcome()
        for key in Self.outcomes { outcome.counts[key] = 0 }
        progress.begin("classifying")
        // One statement, no row locks: it reads the legacy table, auth.users and profiles into the working table.
        try c.query("create temporary table steward_legacy_rows as \(classified)")
        for row in try c.query("select outcome, count(*), count(distinct id) filter (where outcome = 'conflicting_duplicates') from steward_legacy_rows group by outcome").rows {
            let result = try row.decode(String.self, at: 0)
            outcome.counts[result] = try row.decode(Int64.self, at: 1)
            if result == "conflicting_duplicates" { outcome.conflictingUsers = try row.decode(Int64.self, at: 2) }
        }
        for row in try c.query(examples).rows {
            outcome.skipped.append(Skipped(userID: try row.decode(String.self, at: 1), reason: try row.decode(String.self, at: 0),
                                           rows: try row.decode(Int64.self, at: 2)))
        }
        if dryRun { return outcome }
        // One row a profile by now (the grouping above), numbered for the batches; the key lets each statement
        // read its range alone (a scan of the whole table a statement would make the import quadratic).
        try c.query("""
            create temporary table steward_legacy_todo as
            select row_number() over (order by id) as n, id, name from steward_legacy_rows where outcome = 'imported'
            """)
        try c.query("alter table steward_legacy_todo add primary key (n)")
        let total = outcome.counts["imported"] ?? 0
        progress.begin("importing", total: total)
        let clock = ContinuousClock()
        let timeBound = Duration.milliseconds(Int64((batchSeconds * 1000).rounded()))
        // Statements shrink when they are slow against the time bound (a slow disk, a lock waited for) and grow back
        // when fast, so a transaction overshoots `batchSeconds` by a small statement at most.
        let widest = min(batchRows, Self.rowsPerStatement)
        var width = widest
        var from: Int64 = 0, filled: Int64 = 0
        while from < total {
            let began = clock.now
            try c.transaction { c in
                var rows = 0
                while from < total && rows < batchRows && (rows == 0 || clock.now - began < timeBound) {
                    let to = min(from + Int64(min(width, batchRows - rows)), total)
                    let statementBegan = clock.now
                    // The check that the field is empty is the statement's own, made on the row as it is now under
                    // the row's lock (after waiting for a save in progress): a name the user saved since the
                    // classification is kept, and the row is counted `already_there` below.
                    filled += Int64(try c.query("""
                        insert into public.profiles (id, full_name) select id, name from steward_legacy_todo where n > \(from) and n <= \(to)
                        on conflict (id) do update set full_name = excluded.full_name where public.profiles.full_name is null
                        """).affectedRows)
                    let took = clock.now - statementBegan
                    if took * 4 > timeBound { width = max(1, width / 2) } else if took * 16 < timeBound { width = min(widest, width * 2) }
                    rows += Int(to - from)
                    from = to
                }
            }
            let took = clock.now - began
            outcome.transactions += 1
            outcome.longestTransaction = max(outcome.longestTransaction, took)
            progress.set(done: from)
        }
        // Every row stays under one outcome: those whose profile was named between the classification and their batch are there already.
        outcome.counts["imported"] = filled
        outcome.counts["already_there", default: 0] += total - filled
        return outcome
    }
}

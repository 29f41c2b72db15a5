import Jobs
import Postgres

/// Copies the older tutorial's `User` rows into `public.profiles`: fills only empty fields, never overwrites, never deletes.
///
/// Everything happens in the database: the rows are classified into a temporary table by one statement, counted
/// there, and imported by `insert … select` from it; the process reads back only the counts and a few examples of
/// each skip reason, so its memory does not grow with the table.
public struct LegacyUserImport: Sendable {
    public let schema: String, table: String, userIDColumn: String, nameColumn: String, emailColumn: String

    public init(schema: String, table: String, userIDColumn: String, nameColumn: String, emailColumn: String) {
        (self.schema, self.table, self.userIDColumn, self.nameColumn, self.emailColumn) = (schema, table, userIDColumn, nameColumn, emailColumn)
    }

    /// Why a row was not imported, in the order the checks are made.
    public static let skipReasons = ["not_uuid", "no_auth_user", "email_missing", "email_differs"]

    /// Every outcome a row can have.
    public static let outcomes = ["imported", "already_there"] + skipReasons

    /// Examples of each skip reason read back for the log.
    public static let examplesPerReason = 20

    /// One skipped row named in the log.
    public struct Skipped: Sendable, Equatable {
        /// The legacy user id as written (at most 80 characters).
        public let userID: String
        public let reason: String

        public init(userID: String, reason: String) { (self.userID, self.reason) = (userID, reason) }
    }

    /// Rows counted by outcome (every outcome in `outcomes`), and the first few skipped of each reason for the log.
    public struct Outcome: Sendable {
        public var counts: [String: Int64] = [:]
        /// At most `examplesPerReason` of each skip reason, in the table's order.
        public var skipped: [Skipped] = []

        /// Every row of the table (the counts add up to it).
        public var rows: Int64 { counts.values.reduce(0, +) }
    }

    /// Profiles filled by one statement of the import (the import's progress moves by this many).
    public static let batchSize = 1000

    /// Classifies every row in one statement, then (unless `dryRun`) fills the profiles in batches, all in one
    /// transaction; `progress` goes through the phases `classifying` and `importing` (done of the profiles to fill).
    public func run(_ c: Connection, dryRun: Bool, progress: JobProgress = JobProgress()) throws -> Outcome {
        let t = try SQLIdentifier(schema, table)
        let uid = try SQLIdentifier(userIDColumn), name = try SQLIdentifier(nameColumn), email = try SQLIdentifier(emailColumn)
        // A NULL email cannot confirm that the row is the auth user's, so the row is skipped as one that differs is.
        let classified: PostgresQuery = """
            with rows as (
              select l.ctid as row_ref, l.\(uid)::text as user_id, l.\(name)::text as name, l.\(email)::text as email from \(t) l),
            typed as (
              select r.*, case when r.user_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then r.user_id::uuid end as id from rows r)
            select t.row_ref, t.user_id, t.id, t.name,
                   case when t.id is null then 'not_uuid'
                        when u.id is null then 'no_auth_user'
                        when t.email is null then 'email_missing'
                        when lower(t.email) is distinct from lower(u.email) then 'email_differs'
                        when p.id is not null and (p.full_name is not null or t.name is null) then 'already_there'
                        when p.id is null and t.name is null then 'already_there'
                        else 'imported' end as outcome
            from typed t left join auth.users u on u.id = t.id left join public.profiles p on p.id = t.id
            """
        let limit = Int64(Self.examplesPerReason)
        // Only a bounded number of rows comes back: the first of each skip reason.
        let examples: PostgresQuery = """
            select outcome, left(coalesce(user_id, ''), 80) from (
              select outcome, user_id, row_ref, row_number() over (partition by outcome order by row_ref) as nth
              from steward_legacy_rows where outcome = any(\(Self.skipReasons))) e
            where nth <= \(limit) order by outcome, row_ref
            """
        return try c.transaction { c in
            var outcome = Outcome()
            for key in Self.outcomes { outcome.counts[key] = 0 }
            progress.begin("classifying")
            try c.query("create temporary table steward_legacy_rows on commit drop as \(classified)")
            for row in try c.query("select outcome, count(*) from steward_legacy_rows group by outcome").rows {
                outcome.counts[try row.decode(String.self, at: 0)] = try row.decode(Int64.self, at: 1)
            }
            for row in try c.query(examples).rows {
                outcome.skipped.append(Skipped(userID: try row.decode(String.self, at: 1), reason: try row.decode(String.self, at: 0)))
            }
            if !dryRun {
                // Numbered for the batches; the key lets each batch read its range alone (a scan of the whole table
                // a batch would make the import quadratic).
                try c.query("""
                    create temporary table steward_legacy_todo on commit drop as
                    select row_number() over (order by id) as n, id, name
                    from (select distinct on (id) id, name from steward_legacy_rows where outcome = 'imported' order by id, row_ref) d
                    """)
                try c.query("alter table steward_legacy_todo add primary key (n)")
                let total = try c.query("select count(*) from steward_legacy_todo").scalar(Int64.self)
                progress.begin("importing", total: total)
                var from: Int64 = 0
                while from < total {
                    let to = from + Int64(Self.batchSize)
                    try c.query("""
                        insert into public.profiles (id, full_name) select id, name from steward_legacy_todo where n > \(from) and n <= \(to)
                        on conflict (id) do update set full_name = coalesce(public.profiles.full_name, excluded.full_name)
                        """)
                    progress.set(done: min(to, total))
                    from = to
                }
            }
            return outcome
        }
    }
}

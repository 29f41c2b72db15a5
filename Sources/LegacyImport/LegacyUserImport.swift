import Jobs
import Postgres

/// Copies the older tutorial's `User` rows into `public.profiles`: fills only empty fields, never overwrites, never deletes.
public struct LegacyUserImport: Sendable {
    public let schema: String, table: String, userIDColumn: String, nameColumn: String, emailColumn: String

    public init(schema: String, table: String, userIDColumn: String, nameColumn: String, emailColumn: String) {
        (self.schema, self.table, self.userIDColumn, self.nameColumn, self.emailColumn) = (schema, table, userIDColumn, nameColumn, emailColumn)
    }

    /// Why a row was not imported.
    public static let skipReasons = ["not_uuid", "no_auth_user", "email_differs"]

    /// Counts by outcome (`imported`, `already_there`, and each skip reason), and the skipped rows (id, reason) for the log.
    public struct Outcome: Sendable {
        public var counts: [String: Int64] = [:]
        public var skipped: [(row: String, reason: String)] = []
    }

    /// Profiles filled by one statement of the import (the import's progress moves by this many).
    public static let batchSize = 1000

    /// Classifies every row in one statement, then (unless `dryRun`) fills the profiles in batches, all in one
    /// transaction; `progress` goes through the phases `classifying` and `importing` (done of the profiles to fill).
    public func run(_ c: Connection, dryRun: Bool, progress: JobProgress = JobProgress()) throws -> Outcome {
        let t = try SQLIdentifier(schema, table)
        let uid = try SQLIdentifier(userIDColumn), name = try SQLIdentifier(nameColumn), email = try SQLIdentifier(emailColumn)
        let classified: PostgresQuery = """
            with rows as (
              select l.ctid::text as row_ref, l.\(uid)::text as user_id, l.\(name)::text as name, l.\(email)::text as email from \(t) l),
            typed as (
              select r.*, case when r.user_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then r.user_id::uuid end as id from rows r)
            select t.row_ref, t.user_id, t.id, t.name,
                   case when t.id is null then 'not_uuid'
                        when u.id is null then 'no_auth_user'
                        when t.email is not null and lower(t.email) is distinct from lower(u.email) then 'email_differs'
                        when p.id is not null and (p.full_name is not null or t.name is null) then 'already_there'
                        when p.id is null and t.name is null then 'already_there'
                        else 'imported' end as outcome
            from typed t left join auth.users u on u.id = t.id left join public.profiles p on p.id = t.id
            """
        return try c.transaction { c in
            var outcome = Outcome()
            for key in ["imported", "already_there"] + Self.skipReasons { outcome.counts[key] = 0 }
            progress.begin("classifying")
            try c.query("create temporary table steward_legacy_rows on commit drop as \(classified)")
            let rows = try c.query("select row_ref, coalesce(user_id, ''), outcome from steward_legacy_rows order by row_ref").rows
            for row in rows {
                let result = try row.decode(String.self, at: 2)
                outcome.counts[result, default: 0] += 1
                if Self.skipReasons.contains(result) { outcome.skipped.append((try row.decode(String.self, at: 1), result)) }
            }
            if !dryRun {
                try c.query("""
                    create temporary table steward_legacy_todo on commit drop as
                    select row_number() over (order by id) as n, id, name
                    from (select distinct on (id) id, name from steward_legacy_rows where outcome = 'imported' order by id, row_ref) d
                    """)
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

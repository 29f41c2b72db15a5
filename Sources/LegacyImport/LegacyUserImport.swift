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

    /// Classifies every row in one statement, then (unless `dryRun`) fills the profiles in the same transaction.
    public func run(_ c: Connection, dryRun: Bool) throws -> Outcome {
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
            let rows = try c.query("select row_ref, coalesce(user_id, ''), outcome from (\(classified)) x order by row_ref").rows
            for row in rows {
                let result = try row.decode(String.self, at: 2)
                outcome.counts[result, default: 0] += 1
                if Self.skipReasons.contains(result) { outcome.skipped.append((try row.decode(String.self, at: 1), result)) }
            }
            if !dryRun {
                try c.query("""
                    with todo as (select distinct on (id) id, name from (\(classified)) x where outcome = 'imported' order by id, row_ref)
                    insert into public.profiles (id, full_name) select id, name from todo
                    on conflict (id) do update set full_name = coalesce(public.profiles.full_name, excluded.full_name)
                    """)
            }
            return outcome
        }
    }
}

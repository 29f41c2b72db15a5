import Foundation
import Postgres

/// A database with the app's migrations, `count` auth users whose profiles have no name yet, and the legacy
/// `User` table holding a row with a name for each: `import-legacy-users` fills `count` profiles, in batches.
public struct LegacyUsersWorld {
    public let db: TestDatabase
    public let count: Int

    /// Migrates `db` and seeds `count` users and their legacy rows.
    public init(_ db: TestDatabase, count: Int) throws {
        self.db = db
        self.count = count
        let migrate = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
        guard migrate.exitCode == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "migrate: \(migrate.output)"]) }
        let c = try db.connect()
        _ = try c.execute(String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
        try db.connect(as: "supabase_auth_admin").query("""
            insert into auth.users (id, aud, role, email, raw_user_meta_data, raw_app_meta_data, created_at, updated_at)
            select gen_random_uuid(), 'authenticated', 'authenticated', 'legacy' || i || '@example.com', '{}'::jsonb,
                   '{"provider":"email","providers":["email"]}'::jsonb, now(), now()
            from generate_series(1, \(count)) i
            """)
        try c.query("""
            insert into public."User" ("userID", name, email)
            select id::text, 'Legacy ' || split_part(email, '@', 1), email from auth.users where email like 'legacy%@example.com'
            """)
    }

    /// Holds a row lock on the profile the import fills last, in an open transaction of the returned connection
    /// (roll it back to release): the import fills every batch before it, then waits.
    public func holdLastProfile() throws -> Connection {
        let blocker = try db.connect()
        try blocker.execute("""
            begin; select id from public.profiles where id in (select "userID"::uuid from public."User" where email like 'legacy%')
            order by id desc limit 1 for update
            """)
        return blocker
    }

    /// Whether a session of the database waits on a lock now (the import reached the held profile).
    public func someoneWaits() throws -> Bool {
        try db.connect().query("select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")
            .rows[0].decode(Int.self, at: 0) > 0
    }

    /// A config file for `steward job run` on this database with `[job.import-legacy-users]` `batch_rows` (remove it when done).
    public func config(batchRows: Int) throws -> String {
        let path = NSTemporaryDirectory() + "steward-legacy-\(UInt32.random(in: 0...UInt32.max)).ini"
        try "[database]\nurl = \(db.url)\n[job.import-legacy-users]\nbatch_rows = \(batchRows)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The summary `steward job run` printed: each `key: value` line after the first.
    public static func summary(_ run: StewardProcess.Result) -> [String: Int64] {
        var summary: [String: Int64] = [:]
        for line in run.stdout.split(separator: "\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, let value = Int64(parts[1]) { summary[parts[0]] = value }
        }
        return summary
    }

    /// Profiles the import filled.
    public func filled() throws -> Int {
        try db.connect().query("select count(*) from public.profiles where full_name like 'Legacy legacy%'").rows[0].decode(Int.self, at: 0)
    }
}

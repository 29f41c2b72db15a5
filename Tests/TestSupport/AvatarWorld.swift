import Foundation
import Postgres

/// A migrated database with signed-up users, a Storage emulator in front of it, and helpers for the job.
public struct AvatarWorld {
    public let db: TestDatabase
    public let storage: StorageEmulator
    public let users: [String]

    public static func with(users count: Int = 6, mode: TestDatabase.GrantMode = .modern, supautils: Bool = true,
                     _ body: (AvatarWorld) throws -> Void) throws {
        try withTestDatabase(mode, supautils: supautils) { db in
            if supautils {
                _ = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            } else {
                try ProjectMigration.migrate(db)
            }
            let users = try (0..<count).map { try db.signUp(email: "a\($0)@example.com") }
            let storage = try StorageEmulator(database: db)
            try body(AvatarWorld(db: db, storage: storage, users: users))
        }
    }

    /// Raises the API roles' timeouts in this database only, so the fence has room for requests of up to 9 s.
    public func roomForLongRequests() throws {
        let admin = try db.connectAsAdmin()
        for role in ["anon", "authenticated", "authenticator"] {
            try admin.execute("alter role \(role) in database \(db.name) set statement_timeout = '20s'")
        }
        try admin.execute("alter role authenticator in database \(db.name) set lock_timeout = '20s'")
    }

    /// A job config line (`ignore_columns = …`) leaving out every column the default would read but `public.profiles
    /// .avatar_url`, for a test whose model of the rule knows only the profiles' values (the emails and metadata of
    /// the signed-up users mention short generated names too).
    public func onlyProfiles() throws -> String {
        let columns = try db.connectAsAdmin().query("""
            select n.nspname || '.' || c.relname || '.' || a.attname from pg_attribute a join pg_class c on c.oid = a.attrelid
            join pg_namespace n on n.oid = c.relnamespace join pg_type t on t.oid = a.atttypid
            left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
            where c.relkind in ('r', 'm') and a.attnum > 0 and not a.attisdropped
              and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'steward', 'storage')
              and (coalesce(e.typcategory, t.typcategory)::text = 'S' or coalesce(e.typname, t.typname)::text in ('json', 'jsonb'))
              and (n.nspname, c.relname, a.attname) <> ('public', 'profiles', 'avatar_url')
            """).rows.map { try $0.decode(String.self, at: 0) }
        return "ignore_columns = " + columns.map { "\($0): not a reference in this test" }.joined(separator: ", ") + "\n"
    }

    /// Points user `index`'s profile at `reference` (as the app would after an upload).
    public func reference(_ index: Int, _ reference: String?) throws {
        try db.connectAsAdmin().query("update public.profiles set avatar_url = $1 where id = $2", [reference, users[index]])
    }

    /// The command line of `steward job run orphan-avatars` against this world, with `config` as the job's section
    /// in a config file written for it (the caller removes `path`).
    public func arguments(_ extra: [String], config: String) throws -> (arguments: [String], path: String) {
        let path = NSTemporaryDirectory() + "steward-\(UUID().uuidString).ini"
        try "[job.orphan-avatars]\n\(config)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return (["job", "run", "orphan-avatars", "--config", path, "--database-url", db.url,
                 "--storage-url", storage.url, "--service-key-file", storage.serviceKeyFile, "--json"] + extra, path)
    }

    /// The same job started in the background, for tests that act while it runs.
    public func start(_ extra: [String] = [], config: String = "") throws -> StewardProcess.Running {
        try StewardProcess.start(try arguments(extra, config: config).arguments)
    }

    /// `steward job run orphan-avatars` with this world's database and emulator; the summary decoded.
    public func run(_ extra: [String] = [], config: String = "", environment: [String: String] = [:]) throws -> (StewardProcess.Result, [String: Int]) {
        let (arguments, path) = try arguments(extra, config: config)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try StewardProcess.run(arguments, environment: environment)
        let json = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
        return (result, (json["summary"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int })
    }

    /// Uploads `orphans` and `keep0.jpeg`… (one per user, referenced by that user's profile), all two days old,
    /// then clears the emulator's counters so only the job's requests count.
    public func seed(orphans: [String], kept: Int) throws {
        try storage.upload(orphans + (0..<kept).map { "keep\($0).jpeg" })
        try storage.age(2 * 86400)
        for index in 0..<kept { try reference(index, "keep\(index).jpeg") }
        try storage.reset()
    }

    /// Losses after a run: kept objects that are gone, plus deleted orphans missing from the audit table.
    public func losses(kept: Set<String>, orphans: [String]) throws -> Int {
        let present = try storage.objects()
        let gone = Set(orphans).subtracting(present)
        return kept.subtracting(present).count + gone.subtracting(try audited()).count
    }

    /// The scan's working tables (`steward.orphan_*`) that exist now.
    public func workingTables() throws -> [String] {
        try db.connectAsAdmin().query("select tablename::text from pg_tables where schemaname = 'steward' and tablename like 'orphan\\_%' order by 1")
            .rows.map { try $0.decode(String.self, at: 0) }
    }

    public func audited() throws -> Set<String> {
        Set(try db.connect().query("select name from steward.deleted_objects where deleted_at is not null").rows.map { try $0.decode(String.self, at: 0) })
    }
}

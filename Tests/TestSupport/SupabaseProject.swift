import Foundation
import Postgres

/// A throwaway project folder laid out as `supabase init` lays it out (`supabase/config.toml`,
/// `supabase/migrations/<version>_<name>.sql`), and `db push` done with the CLI's own statements.
public struct SupabaseProject: Sendable {
    /// The project root (holding `supabase/`).
    public let root: String
    /// `<root>/supabase/migrations`.
    public var migrations: String { root + "/supabase/migrations" }

    /// A project holding `files` (file name → text) in `supabase/migrations`.
    public init(files: [String: String]) throws {
        root = NSTemporaryDirectory() + "steward-supabase-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/supabase/migrations", withIntermediateDirectories: true)
        // The first lines of the config.toml that `supabase init` writes.
        try """
            # For detailed configuration reference documentation, visit:
            # https://supabase.com/docs/guides/local-development/cli/config
            # A string used to distinguish different Supabase projects on the same host. Defaults to the
            # working directory name when running `supabase init`.
            project_id = "steward-test"

            [db]
            # Port to use for the local database URL.
            port = 54322
            major_version = 15

            [db.seed]
            enabled = true
            sql_paths = ["./seed.sql"]

            """.write(toFile: root + "/supabase/config.toml", atomically: true, encoding: .utf8)
        try "".write(toFile: root + "/supabase/seed.sql", atomically: true, encoding: .utf8)
        for (name, text) in files { try write(name, text) }
    }

    public func write(_ name: String, _ text: String) throws {
        try text.write(toFile: migrations + "/" + name, atomically: true, encoding: .utf8)
    }

    public func read(_ name: String) throws -> String { try String(contentsOfFile: migrations + "/" + name, encoding: .utf8) }

    public func remove(_ name: String) throws { try FileManager.default.removeItem(atPath: migrations + "/" + name) }

    public func delete() { try? FileManager.default.removeItem(atPath: root) }

    /// The CLI's `CreateMigrationTable` batch (supabase/cli `pkg/migration/history.go`), one implicit transaction.
    public static func createCLITable(on connection: Connection) throws {
        try connection.transaction { c in
            try c.query("SET lock_timeout = '4s'")
            try c.query("CREATE SCHEMA IF NOT EXISTS supabase_migrations")
            try c.query("CREATE TABLE IF NOT EXISTS supabase_migrations.schema_migrations (version text NOT NULL PRIMARY KEY)")
            try c.query("ALTER TABLE supabase_migrations.schema_migrations ADD COLUMN IF NOT EXISTS statements text[]")
            try c.query("ALTER TABLE supabase_migrations.schema_migrations ADD COLUMN IF NOT EXISTS name text")
        }
        try connection.query("RESET ALL")
    }

    /// `supabase db push` of one file as the CLI does it (`pkg/migration/file.go` `ExecBatch`): the statements it
    /// split, then its history insert, in one transaction; `RESET ALL` after. `commit: false` leaves the transaction
    /// open (a push still running) for the caller to end with `commit` or `rollback`.
    public static func push(version: String, name: String, statements: [String], on connection: Connection, commit: Bool = true) throws {
        try createCLITable(on: connection)
        try connection.query("begin")
        do {
            for statement in statements { try connection.query(unsafeSQL: statement) }
            try connection.query("INSERT INTO supabase_migrations.schema_migrations(version, name, statements) VALUES($1, $2, $3)",
                                 [version, name, statements])
        } catch {
            try? connection.query("rollback")
            throw error
        }
        if commit {
            try connection.query("commit")
            try connection.query("RESET ALL")
        }
    }

    /// `supabase migration repair --status applied` as an old CLI wrote it: the version alone, no statements.
    public static func repairWithoutStatements(version: String, on connection: Connection) throws {
        try createCLITable(on: connection)
        try connection.query("INSERT INTO supabase_migrations.schema_migrations(version) VALUES($1)", [version])
    }
}

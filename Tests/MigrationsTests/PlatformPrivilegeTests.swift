import Foundation
import Postgres
import Testing
import TestSupport

/// The local shim holds postgres to today's platform privileges, with and without the supautils stand-in, and
/// Steward works within them: it says before changing anything which files need the policy power.
@Suite("today's platform privileges, with and without the supautils stand-in", .needsCluster)
struct PlatformPrivilegeTests {
    static let storageHardening = TestEnvironment.root + "/sql/optional/storage-hardening"

    /// The SQLSTATE a statement fails with as `role` (nil when it succeeds; its effects are rolled back).
    func failure(_ db: TestDatabase, _ sql: String, as role: String = "postgres") throws -> String? {
        let c = try db.connect(as: role)
        try c.execute("begin")
        defer { _ = try? c.execute("rollback") }
        do {
            _ = try c.execute(sql)
            return nil
        } catch let error as PostgresError {
            return error.sqlState ?? "?"
        }
    }

    func count(_ db: TestDatabase, _ sql: String) throws -> Int {
        try db.connectAsAdmin().query(unsafeSQL: sql).rows[0].decode(Int.self, at: 0)
    }

    @Test("without the stand-in, migrate and its dry run name every statement that needs the policy power, and apply nothing",
          arguments: TestDatabase.GrantMode.allCases)
    func refusedBeforeAnything(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode, supautils: false) { db in
            for dry in [true, false] {
                let run = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory,
                                                  "--include", Self.storageHardening] + (dry ? ["--dry-run"] : []))
                #expect(run.exitCode == 1, "\(run.output)")
                #expect(run.stderr.contains("nothing was applied"), "\(run.output)")
                for place in ["0005_avatars_policies.sql:3:1: CREATE POLICY \"Avatar images are publicly accessible.\" on storage.objects",
                              "0005_avatars_policies.sql:6:1: CREATE POLICY \"Anyone can upload an avatar.\" on storage.objects",
                              "0005_avatars_policies.sql:9:1: CREATE POLICY \"Anyone can update their own avatar.\" on storage.objects",
                              "1101_avatar_delete_own.sql:3:1: CREATE POLICY", "1102_avatar_upload_signed_in.sql:2:1: ALTER POLICY"] {
                    #expect(run.stderr.contains(place), "missing \(place) in \(run.stderr)")
                }
                #expect(run.stderr.contains("supabase_storage_admin") && run.stderr.contains("supautils"))
                #expect(!run.stderr.contains("0001_") && !run.stderr.contains("0003_"), "only the files that need the power: \(run.stderr)")
                #expect(try count(db, "select count(*) from pg_class where oid = to_regclass('public.profiles')") == 0)
                #expect(try count(db, "select count(*) from pg_policy where polrelid = 'storage.objects'::regclass") == 0)
                if try count(db, "select count(*) from pg_class where oid = to_regclass('steward.schema_migrations')") == 1 {
                    #expect(try count(db, "select count(*) from steward.schema_migrations") == 0)
                }
            }
        }
    }

    @Test("with the stand-in (the platform's supautils), the same files apply as postgres",
          arguments: TestDatabase.GrantMode.allCases)
    func appliesWithStandIn(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode, supautils: true) { db in
            let run = try StewardProcess.run(["migrate", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory,
                                              "--include", Self.storageHardening])
            #expect(run.exitCode == 0, "\(run.output)")
            #expect(try count(db, "select count(*) from steward.schema_migrations") == 7)
            #expect(try count(db, "select count(*) from pg_policy where polrelid = 'storage.objects'::regclass") == 4)
        }
    }

    @Test("without the stand-in, the owner applies the refused files by hand and migrate --adopt records them; verify is clean",
          arguments: TestDatabase.GrantMode.allCases)
    func ownerThenAdopt(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode, supautils: false) { db in
            let outcome = try ProjectMigration.migrate(db, include: ["storage-hardening"])
            #expect(outcome.refused == ["0005_avatars_policies.sql", "1101_avatar_delete_own.sql", "1102_avatar_upload_signed_in.sql"])
            #expect(outcome.adopted == outcome.refused)
            #expect(try count(db, "select count(*) from steward.schema_migrations") == 7)
            let verify = try StewardProcess.run(["verify", "--database-url", db.url, "--include", Self.storageHardening])
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(verify.stdout.contains("ok: the database matches the 7 applied migration(s)"))
        }
    }

    @Test("postgres cannot disable, drop or replace the delete guard, with or without the stand-in",
          arguments: TestDatabase.GrantMode.allCases, [true, false])
    func deleteGuardHolds(mode: TestDatabase.GrantMode, supautils: Bool) throws {
        try withTestDatabase(mode, supautils: supautils) { db in
            try ProjectMigration.migrate(db)
            let attempts = [
                "alter table storage.objects disable trigger protect_objects_delete",
                "alter table storage.objects disable trigger all",
                "alter table storage.buckets disable trigger protect_buckets_delete",
                "drop trigger protect_objects_delete on storage.objects",
                "create or replace function storage.protect_delete() returns trigger language plpgsql as $$ begin return null; end $$",
                "alter function storage.protect_delete() rename to protect_delete_off",
                "alter table storage.objects disable row level security",
                "alter table storage.objects owner to postgres",
                "set session_replication_role = replica",
                "set role supabase_storage_admin",
                "create function storage.steward_x() returns int language sql as 'select 1'",
                "create policy steward_x on storage.buckets using (true)",
            ]
            for sql in attempts {
                #expect(try failure(db, sql) == "42501", "postgres could run: \(sql)")
            }
            #expect(try count(db, "select count(*) from pg_trigger where tgname in ('protect_objects_delete', 'protect_buckets_delete') and tgenabled = 'O'") == 2)
            let c = try db.connect()
            let error = #expect(throws: PostgresError.self) { try c.query("delete from storage.objects where name = 'nothing'") }
            #expect(error?.sqlState == "42501")
            #expect(error?.message.contains("Direct deletion from storage tables is not allowed") == true)
            // The one power the stand-in gives: policies on storage.objects.
            #expect(try failure(db, "create policy steward_x on storage.objects for select using (false)") == (supautils ? nil : "42501"))
            #expect(try count(db, "select count(*) from pg_roles where rolname = 'postgres' and pg_has_role('postgres', 'supabase_storage_admin', 'member')") == 0)
        }
    }

    @Test("postgres cannot change auth objects it does not own, with or without the stand-in",
          arguments: TestDatabase.GrantMode.allCases, [true, false])
    func authUntouchable(mode: TestDatabase.GrantMode, supautils: Bool) throws {
        try withTestDatabase(mode, supautils: supautils) { db in
            try ProjectMigration.migrate(db)
            let attempts = [
                "alter table auth.users add column steward_x int",
                "alter table auth.users disable row level security",
                "alter table auth.users disable trigger on_auth_user_created",
                "drop trigger on_auth_user_created on auth.users",
                "create or replace function auth.uid() returns uuid language sql stable as $$ select null::uuid $$",
                "drop function auth.jwt()",
                "create table auth.steward_x (id int)",
                "create policy steward_x on auth.users using (true)",
                "set role supabase_auth_admin",
            ]
            for sql in attempts {
                #expect(try failure(db, sql) == "42501", "postgres could run: \(sql)")
            }
            #expect(try count(db, "select count(*) from pg_trigger where tgname = 'on_auth_user_created' and tgenabled = 'O'") == 1)
        }
    }

    @Test("the roles carry today's attributes, settings and memberships")
    func roleSettings() throws {
        try withTestDatabase { db in
            let c = try db.connectAsAdmin()
            func flag(_ sql: String) throws -> Bool { try c.query(unsafeSQL: sql).rows[0].decode(Bool.self, at: 0) }
            #expect(try flag("select not rolcreaterole from pg_roles where rolname = 'supabase_auth_admin'"))
            #expect(try flag("select not rolsuper and rolbypassrls and rolcreaterole from pg_roles where rolname = 'postgres'"))
            for admin in ["supabase_storage_admin", "supabase_auth_admin"] {
                #expect(try !flag("select pg_has_role('postgres', '\(admin)', 'member')"), "postgres is a member of \(admin)")
            }
            for role in ["pg_read_all_data", "pg_monitor", "pg_signal_backend", "anon", "authenticated", "service_role"] {
                #expect(try flag("select pg_has_role('postgres', '\(role)', 'member')"), "postgres is no member of \(role)")
            }
            let settings = try c.query("""
                select r.rolname::text, array_to_string(s.setconfig, ';') from pg_db_role_setting s join pg_roles r on r.oid = s.setrole
                where s.setdatabase = 0 order by 1
                """).rows.map { (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)) }
            let byRole = Dictionary(settings, uniquingKeysWith: { a, _ in a })
            #expect(byRole["authenticator"]?.contains("statement_timeout=8s") == true)
            #expect(byRole["authenticator"]?.contains("lock_timeout=8s") == true)
            #expect(byRole["supabase_auth_admin"]?.contains("search_path=auth") == true)
            #expect(byRole["postgres"]?.contains("search_path=\"$user\", public, extensions") == true, "\(byRole)")
            #expect(try flag("select has_table_privilege('postgres', 'storage.objects', 'DELETE WITH GRANT OPTION')"))
        }
    }
}

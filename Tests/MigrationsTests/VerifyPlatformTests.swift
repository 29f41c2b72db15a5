import Foundation
import Postgres
import Testing
import TestSupport

/// `steward verify` on the real-privilege shim: narrower rights are not drift, enforcement lines follow the live
/// policies, unrecorded objects are not "ok", and the Security Advisor's findings are advice with a fix.
@Suite("verify on today's platform privileges", .needsCluster)
struct VerifyPlatformTests {
    func verify(_ db: TestDatabase, include: [String] = []) throws -> StewardProcess.Result {
        try StewardProcess.run(["verify", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory]
            + (include.isEmpty ? [] : ["--include", include.map { TestEnvironment.root + "/sql/optional/" + $0 }.joined(separator: ",")]))
    }

    /// The SQLSTATE `sql` fails with when run by the Data API as anon (nil) or a signed-in user; always rolled back.
    func failure(_ db: TestDatabase, as user: String?, _ sql: String) throws -> String? {
        let c = try db.connect(as: "authenticator")
        try c.execute("begin")
        defer { _ = try? c.execute("rollback") }
        try c.execute(user == nil ? "set local role anon" : "set local role authenticated")
        if let user { try c.query("select set_config('request.jwt.claims', $1, true)", ["{\"sub\":\"\(user)\",\"role\":\"authenticated\"}"]) }
        do {
            _ = try c.execute(sql)
            return nil
        } catch let error as PostgresError {
            return error.sqlState ?? "?"
        }
    }

    @Test("a hardening revoke is listed as stricter than the migrations (exit 0); a wider grant is drift (exit 2)",
          arguments: TestDatabase.GrantMode.allCases, [true, false])
    func stricterAndWider(mode: TestDatabase.GrantMode, supautils: Bool) throws {
        try withTestDatabase(mode, supautils: supautils) { db in
            try ProjectMigration.migrate(db)
            try db.connect().execute("revoke insert, update, delete, truncate on public.profiles from anon")
            let narrowed = try verify(db)
            #expect(narrowed.exitCode == 0, "\(narrowed.output)")
            #expect(narrowed.stdout.contains("ok: the database matches the 5 applied migration(s)"))
            // Under the 2026 defaults anon never had those rights: the revoke changes nothing.
            #expect(narrowed.stdout.contains("stricter than the migrations") == (mode == .legacy), "\(narrowed.stdout)")
            if mode == .legacy {
                // Legacy default privileges gave anon everything; the revoke leaves SELECT and the rest.
                for right in ["DELETE", "INSERT", "TRUNCATE", "UPDATE"] {
                    #expect(narrowed.stdout.contains("0001_profiles_table.sql: table public.profiles grants: anon \(right) is revoked (the files grant it)"), "\(narrowed.stdout)")
                }
                #expect(!narrowed.stdout.contains("anon SELECT is revoked"), "\(narrowed.stdout)")
            }
            try db.connect().execute("revoke select on public.profiles from anon")
            let none = try verify(db)
            #expect(none.exitCode == 0, "\(none.output)")
            #expect(none.stdout.contains("0001_profiles_table.sql: table public.profiles grants: anon SELECT is revoked (the files grant it)"), "\(none.stdout)")
            #expect(none.stdout.contains("stricter than the migrations"))
            // Wider: a right the files never give (legacy anon already had every table right, so another grantee).
            try db.connect().execute("grant select on public.profiles to anon; grant select on public.profiles to authenticator")
            let wider = try verify(db)
            #expect(wider.exitCode == 2, "\(wider.output)")
            #expect(wider.stdout.contains("0001_profiles_table.sql: table public.profiles grants: extra authenticator SELECT that the files do not create"), "\(wider.stdout)")
            if mode == .modern {
                try db.connect().execute("revoke select on public.profiles from authenticator; grant delete on public.profiles to anon")
                let anon = try verify(db)
                #expect(anon.exitCode == 2, "\(anon.output)")
                #expect(anon.stdout.contains("0001_profiles_table.sql: table public.profiles grants: extra anon DELETE that the files do not create"), "\(anon.stdout)")
            }
        }
    }

    @Test("the upload line follows the live INSERT policies on storage.objects", arguments: TestDatabase.GrantMode.allCases)
    func uploadLine(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode) { db in
            try ProjectMigration.migrate(db, include: ["storage-hardening"])
            let hardened = try verify(db, include: ["storage-hardening"])
            #expect(hardened.stdout.contains("avatar uploads: signed-in users only"), "\(hardened.stdout)")
            try db.connect().execute("drop policy \"Anyone can upload an avatar.\" on storage.objects")
            let dropped = try verify(db, include: ["storage-hardening"])
            #expect(!dropped.stdout.contains("signed-in users only"), "\(dropped.stdout)")
            #expect(dropped.stdout.contains("avatar uploads: no client role can upload"), "\(dropped.stdout)")
            // A policy whose check is plainly false allows nothing either.
            try db.connect().execute("create policy \"Anyone can upload an avatar.\" on storage.objects for insert to authenticated with check (false)")
            #expect(try verify(db, include: ["storage-hardening"]).stdout.contains("avatar uploads: no client role can upload"))
        }
    }

    @Test("after a refused --adopt, verify says the database holds objects no applied migration accounts for (exit 2)",
          arguments: TestDatabase.GrantMode.allCases)
    func unrecordedObjects(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode) { db in
            try db.connect().execute(try QuickstartVariant.older.sql())
            let adopt = try StewardProcess.run(["migrate", "--adopt", "--database-url", db.url, "--migrations", TestEnvironment.migrationsDirectory])
            #expect(adopt.exitCode == 2, "\(adopt.output)")
            let result = try verify(db)
            #expect(result.exitCode == 2, "\(result.output)")
            #expect(!result.stdout.contains("ok: the database matches"), "\(result.stdout)")
            #expect(result.stdout.contains("0001_profiles_table.sql is not applied, but the database holds its objects, which no applied migration accounts for: table profiles"), "\(result.stdout)")
            #expect(result.stdout.contains("steward migrate --adopt"))
            // An empty database with nothing applied is still ok.
            try withTestDatabase(mode) { empty in
                let clean = try verify(empty)
                #expect(clean.exitCode == 0 && clean.stdout.contains("ok: the database matches the 0 applied migration(s)"), "\(clean.output)")
            }
        }
    }

    @Test("handle_new_user(): advice until api-hardening, which keeps sign-up working and stops anon calling it",
          arguments: TestDatabase.GrantMode.allCases, [true, false])
    func handleNewUser(mode: TestDatabase.GrantMode, supautils: Bool) throws {
        try withTestDatabase(mode, supautils: supautils) { db in
            try ProjectMigration.migrate(db)
            let before = try verify(db)
            #expect(before.stdout.contains("public.handle_new_user(): SECURITY DEFINER and executable by anon, authenticated"), "\(before.stdout)")
            // Callable: the call gets past the privilege check (and fails only because a trigger function needs a trigger).
            #expect(try failure(db, as: nil, "select public.handle_new_user()") != "42501")
            #expect(try db.connect().query("select has_table_privilege('anon', 'public.profiles', 'TRUNCATE')").rows[0].decode(Bool.self, at: 0) == (mode == .legacy))
            #expect(before.stdout.contains("public.profiles: anon, authenticated may TRUNCATE it") == (mode == .legacy), "\(before.stdout)")

            try ProjectMigration.migrate(db, include: ["api-hardening"])
            let after = try verify(db, include: ["api-hardening"])
            #expect(after.exitCode == 0, "\(after.output)")
            #expect(after.stdout.contains("ok: the database matches the 7 applied migration(s)"), "\(after.stdout)")
            #expect(!after.stdout.contains("handle_new_user"), "\(after.stdout)")
            #expect(!after.stdout.contains("TRUNCATE"), "\(after.stdout)")
            #expect(!after.stdout.contains("stricter than the migrations"), "\(after.stdout)")
            let user = try db.signUp(email: "new@example.com", metadata: #"{"full_name":"New User"}"#)
            #expect(try db.connect().query("select full_name from public.profiles where id = $1", [user]).rows.first?.decode(String?.self, at: 0) == "New User")
            #expect(try failure(db, as: nil, "select public.handle_new_user()") == "42501")
            #expect(try failure(db, as: user, "select public.handle_new_user()") == "42501")
            #expect(try failure(db, as: nil, "truncate public.profiles") == "42501")
            #expect(try failure(db, as: user, "truncate public.profiles") == "42501")
        }
    }

    @Test("avatar_object_exists() adds no advisor finding, and its trigger still checks uploads", arguments: TestDatabase.GrantMode.allCases)
    func avatarIntegrityNotCallable(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode) { db in
            try ProjectMigration.migrate(db, include: ["avatar-integrity"])
            let result = try verify(db, include: ["avatar-integrity"])
            #expect(result.exitCode == 0, "\(result.output)")
            #expect(!result.stdout.contains("avatar_object_exists"), "\(result.stdout)")
            for role in ["anon", "authenticated", "public"] {
                let sql = role == "public"
                    ? "select exists (select 1 from pg_proc p, aclexplode(p.proacl) a where p.oid = 'public.avatar_object_exists()'::regprocedure and a.grantee = 0)"
                    : "select has_function_privilege('\(role)', 'public.avatar_object_exists()', 'EXECUTE')"
                #expect(try db.connect().query(unsafeSQL: sql).rows[0].decode(Bool.self, at: 0) == false, "\(role) may execute avatar_object_exists()")
            }
            let user = try db.signUp(email: "a@example.com")
            #expect(try failure(db, as: user, "update public.profiles set avatar_url = 'missing.png' where id = '\(user)'") == "23503")
            try db.connectAsAdmin().execute("insert into storage.objects (bucket_id, name) values ('avatars', 'present.png')")
            #expect(try failure(db, as: user, "update public.profiles set avatar_url = 'present.png' where id = '\(user)'") == nil)
        }
    }
}

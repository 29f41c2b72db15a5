import Foundation
import Migrations
import SupabaseProject
import Postgres
import Testing
import TestSupport

@Suite("steward migrate --adopt and steward verify", .needsCluster)
struct AdoptTests {
    /// A database where `variant` was pasted into the SQL editor by hand (as the postgres role, like the dashboard).
    func pasted(_ variant: QuickstartVariant, _ db: TestDatabase) throws {
        try db.connect().execute(try variant.sql())
    }

    @Test("the current quickstart pasted by hand is adopted, in both grant modes, and then verifies clean",
          arguments: TestDatabase.GrantMode.allCases)
    func adoptsCurrent(mode: TestDatabase.GrantMode) throws {
        try withTestDatabase(mode) { db in
            try pasted(.current, db)
            let report = try migrate(db) { $0.adopt = true }
            #expect(report.adopted.count == 5)
            #expect(report.applied.isEmpty)
            #expect(try scalar(db, "select count(*) from steward.schema_migrations where method = 'adopt'", as: Int.self) == 5)
            let verify = try Verifier(connection: db.connect(), source: MigrationSource(directory: TestEnvironment.migrationsDirectory)).verify()
            #expect(verify.differences.isEmpty, "\(verify.differences)")
            // What the shadow learned is recorded for every adopted file; the shadow itself is gone.
            #expect(try scalar(db, "select count(*) from steward.schema_migrations where catalog_recorded = 'shadow'", as: Int.self) == 5)

        }
    }

    @Test("without --adopt, a pasted database fails with 'already exists' and nothing is recorded")
    func withoutAdopt() throws {
        try withTestDatabase { db in
            try pasted(.current, db)
            let error = #expect(throws: MigrationError.self) { try migrate(db) }
            #expect(error?.description.contains("42P07") == true)
            #expect(try scalar(db, "select count(*) from steward.schema_migrations", as: Int.self) == 0)
        }
    }

    @Test("each older quickstart variant is refused with every difference listed, and nothing is recorded",
          arguments: [
            (QuickstartVariant.narrowedSelect, ["0005_avatars_policies.sql: table storage.objects policies: \"Avatar images are publicly accessible.\" differs: live as permissive for select to public using (((bucket_id = 'avatars'::text) AND"]),
            (QuickstartVariant.older, [
                "0001_profiles_table.sql: table public.profiles grants: anon SELECT is revoked (the files grant it)",
                "0001_profiles_table.sql: table public.profiles grants: authenticated INSERT is revoked (the files grant it)",
                "0001_profiles_table.sql: table public.profiles grants: authenticated SELECT is revoked (the files grant it)",
                "0001_profiles_table.sql: table public.profiles grants: authenticated UPDATE is revoked (the files grant it)",
                "0002_profiles_rls.sql: table public.profiles policies: \"Users can insert their own profile.\" differs: live as permissive for insert to public with check ((auth.uid() = id)), files as permissive for insert to public with check ((( SELECT auth.uid() AS uid) = id))",
                "0002_profiles_rls.sql: table public.profiles policies: \"Users can update own profile.\" differs: live as permissive for update to public using ((auth.uid() = id))",
                "0003_handle_new_user.sql: function public.handle_new_user(): definition differs: live has nothing else; the files have `SET search_path TO ''`",
            ]),
            (QuickstartVariant.dashboardTemplate, [
                "0001_profiles_table.sql: table public.profiles constraints: FOREIGN KEY (id) REFERENCES auth.users(id) is missing",
                "0001_profiles_table.sql: table public.profiles constraints: extra FOREIGN KEY (id) REFERENCES auth.users(id) ON DELETE CASCADE that the files do not create",
                "0005_avatars_policies.sql: table storage.objects policies: \"Anyone can update their own avatar.\" is missing",
            ]),
          ])
    func refusesVariants(variant: QuickstartVariant, expected: [String]) throws {
        try withTestDatabase(.modern) { db in
            try pasted(variant, db)
            let error = try #require(throws: MigrationError.self) { try migrate(db) { $0.adopt = true } }
            guard case .adoptionRefused(let differences) = error else { Issue.record("unexpected \(error)"); return }
            for line in expected {
                #expect(differences.contains { $0.hasPrefix(line) }, "missing \(line) in \(differences)")
            }
            #expect(differences.count == expected.count, "\(differences)")
            #expect(try scalar(db, "select count(*) from steward.schema_migrations", as: Int.self) == 0)
        }
    }

    @Test("a partly pasted quickstart: the present files are adopted, the absent ones applied")
    func partial() throws {
        try withTestDatabase { db in
            let sql = try QuickstartVariant.current.sql()
            try db.connect().execute(String(sql[..<sql.range(of: "-- Set up Storage!")!.lowerBound]))
            let report = try migrate(db) { $0.adopt = true }
            #expect(report.adopted == ["0001_profiles_table.sql", "0002_profiles_rls.sql", "0003_handle_new_user.sql"])
            #expect(report.applied.map(\.file) == ["0004_avatars_bucket.sql", "0005_avatars_policies.sql"])
        }
    }

    @Test("verify lists a dropped policy, an altered one, a public bucket, RLS off and a disabled trigger")
    func verifyFindsDrift() throws {
        try withTestDatabase { db in
            _ = try migrate(db)
            let source = try MigrationSource(directory: TestEnvironment.migrationsDirectory)
            #expect(try Verifier(connection: db.connect(), source: source).verify().differences.isEmpty)
            let c = try db.connect()
            try c.execute("""
                drop policy "Users can update own profile." on profiles;
                alter policy "Avatar images are publicly accessible." on storage.objects using (true);
                update storage.buckets set public = true where id = 'avatars';
                alter table profiles disable row level security;
                """)
            try db.connectAsAdmin().execute("alter table auth.users disable trigger on_auth_user_created")
            let report = try Verifier(connection: db.connect(), source: source, advisor: SupabaseAdvisor()).verify()
            let text = report.differences.joined(separator: "\n")
            #expect(text.contains("0002_profiles_rls.sql: table public.profiles policies: \"Users can update own profile.\" is missing"))
            #expect(text.contains("0005_avatars_policies.sql: table storage.objects policies: \"Avatar images are publicly accessible.\" differs: live as permissive for select to public using (true)"))
            #expect(text.contains("0004_avatars_bucket.sql: bucket avatars: public differs: live true, files false"))
            #expect(text.contains("0002_profiles_rls.sql: table public.profiles: row level security differs: live disabled, files enabled"))
            #expect(text.contains("0003_handle_new_user.sql: table auth.users triggers: on_auth_user_created differs: live CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users FOR EACH ROW EXECUTE FUNCTION public.handle_new_user() (DISABLED)"))
            #expect(report.differences.count == 5, "\(report.differences)")
            // The three weaknesses of the quickstart schema, and the Security Advisor's SECURITY DEFINER finding.
            #expect(report.advisories.count == 4, "\(report.advisories)")
            #expect(report.advisories.contains { $0.hasPrefix("public.handle_new_user(): SECURITY DEFINER and executable by anon, authenticated") })
        }
    }

    @Test("verify notices a function changed behind the migrations' back")
    func verifyFunctionBody() throws {
        try withTestDatabase { db in
            _ = try migrate(db)
            try db.connect().execute("""
                create or replace function public.handle_new_user() returns trigger set search_path = '' as $$
                begin insert into public.profiles (id) values (new.id); return new; end; $$ language plpgsql security invoker;
                """)
            let report = try Verifier(connection: db.connect(), source: MigrationSource(directory: TestEnvironment.migrationsDirectory)).verify()
            let line = try #require(report.differences.first, "\(report.differences)")
            #expect(report.differences.count == 1, "\(report.differences)")
            #expect(line.hasPrefix("0003_handle_new_user.sql: function public.handle_new_user(): definition differs: live has "), "\(line)")
            #expect(line.contains("the files have `SECURITY DEFINER`"), "\(line)")
            #expect(line.contains("insert into public.profiles (id) values (new.id)"), "\(line)")
        }
    }

    @Test("verify compares a function that a later file defines again as the last file leaves it, named arguments too")
    func verifyRedefinedFunction() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("steward-redefined-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "create function public.greeting(who text, times int) returns text language sql immutable as $$ select repeat('hi ' || who, times) $$;\n"
            .write(toFile: folder + "/0001_greeting.sql", atomically: true, encoding: .utf8)
        try "create or replace function public.greeting(who text, times int) returns text language sql immutable as $$ select repeat('hello ' || who, times) $$;\n"
            .write(toFile: folder + "/0002_greeting_hello.sql", atomically: true, encoding: .utf8)
        try withTestDatabase { db in
            _ = try migrate(db, folder)
            let clean = try Verifier(connection: db.connect(), source: MigrationSource(directory: folder)).verify()
            #expect(clean.differences.isEmpty, "\(clean.differences)")
            try db.connect().execute("create or replace function public.greeting(who text, times int) returns text language sql immutable as $$ select 'changed' $$")
            let changed = try Verifier(connection: db.connect(), source: MigrationSource(directory: folder)).verify()
            #expect(changed.differences.count == 1, "\(changed.differences)")
            #expect(changed.differences.first?.hasPrefix("0002_greeting_hello.sql: function public.greeting(who text, times integer): definition differs: live has `AS $function$ select 'changed' $function$`") == true,
                    "\(changed.differences)")
        }
    }
}

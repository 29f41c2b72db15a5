import Foundation
import Migrations
import SupabaseProject
import Postgres
import Testing
import TestSupport

@Suite("steward migrate --adopt and steward verify")
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
            // The probe's objects never outlive the check.
            #expect(try scalar(db, "select count(*) from pg_class where relname like 'steward_probe%'", as: Int.self) == 0)
            #expect(try scalar(db, "select count(*) from pg_proc where proname like 'steward_probe%'", as: Int.self) == 0)
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
            (QuickstartVariant.narrowedSelect, ["0005_avatars_policies.sql: policy \"Avatar images are publicly accessible.\" on storage.objects: USING differs"]),
            (QuickstartVariant.older, [
                "0001_profiles_table.sql: table profiles: grant to anon is missing (files: SELECT)",
                "0001_profiles_table.sql: table profiles: grant to authenticated is missing (files: INSERT, SELECT, UPDATE)",
                "0002_profiles_rls.sql: policy \"Users can insert their own profile.\" on profiles: WITH CHECK differs: live (auth.uid() = id), files (( SELECT auth.uid() AS uid) = id)",
                "0002_profiles_rls.sql: policy \"Users can update own profile.\" on profiles: USING differs",
                "0003_handle_new_user.sql: function public.handle_new_user(): settings (search_path …) differs: live (none), files search_path=\"\"",
            ]),
            (QuickstartVariant.dashboardTemplate, [
                "0001_profiles_table.sql: table profiles: constraint profiles_id_fkey differs: live FOREIGN KEY (id) REFERENCES auth.users(id) ON DELETE CASCADE, files FOREIGN KEY (id) REFERENCES auth.users(id)",
                "0005_avatars_policies.sql: policy \"Anyone can update their own avatar.\" on storage.objects is missing",
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
            #expect(text.contains("0002_profiles_rls.sql: policy \"Users can update own profile.\" on profiles is missing"))
            #expect(text.contains("policy \"Avatar images are publicly accessible.\" on storage.objects: USING differs: live true"))
            #expect(text.contains("bucket avatars: public is true, files say false"))
            #expect(text.contains("row level security is OFF"))
            #expect(text.contains("trigger on_auth_user_created on auth.users is DISABLED"))
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
            #expect(report.differences.contains { $0.contains("SECURITY DEFINER differs: live no, files yes") })
            #expect(report.differences.contains { $0.contains("body differs") })
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
            #expect(changed.differences.first?.hasPrefix("0002_greeting_hello.sql: function public.greeting(text, integer): body differs") == true,
                    "\(changed.differences)")
        }
    }
}

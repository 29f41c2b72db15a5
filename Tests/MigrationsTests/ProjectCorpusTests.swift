import Foundation
import Postgres
import Testing
import TestSupport

/// `verify` and `--adopt` on projects shaped like real Supabase apps (Fixtures/projects: a chat with roles and
/// realtime, a billing schema with enums, views and a concurrent index, notes with buckets and storage policies, teams
/// in their own schema with partitions and renames): clean right after `migrate`, three hand-made drifts named each,
/// adoption after the files were applied by hand with psql, and an upgrade from a history without records.
@Suite("real-project shapes: migrate, verify, drift, adopt, upgrade", .needsCluster)
struct ProjectCorpusTests {
    /// One project of the corpus and the three drifts each must show: SQL run by hand, and the line verify must print.
    struct Project: Sendable, CustomStringConvertible {
        let name: String
        /// The SQL run by hand and what verify must print (a line's end when the file it names depends on which
        /// file last changed the group: grants follow default privileges and `grant … on all tables`).
        let drifts: [(sql: String, line: String)]
        var folder: String { TestEnvironment.root + "/Tests/MigrationsTests/Fixtures/projects/" + name }
        var description: String { name }
    }

    static let projects: [Project] = [
        Project(name: "chat", drifts: [
            (#"drop policy "Channel members read messages" on public.messages"#,
             #"20250101000200_rls.sql: table public.messages policies: "Channel members read messages" is missing"#),
            ("grant delete on public.messages to anon",
             ": table public.messages grants: extra anon DELETE that the files do not create"),
            ("""
             create or replace function public.authorize(requested_permission public.app_permission, user_id uuid) returns boolean
             language plpgsql stable security definer set search_path = '' as $$ begin return true; end; $$
             """, "20250101000100_authorize.sql: function public.authorize(requested_permission public.app_permission, user_id uuid): definition differs"),
        ]),
        Project(name: "billing", drifts: [
            (#"drop policy "Can only view own subs data." on public.subscriptions"#,
             #"0001_billing_schema.sql: table public.subscriptions policies: "Can only view own subs data." is missing"#),
            ("grant insert on public.products to anon", ": table public.products grants: extra anon INSERT that the files do not create"),
            ("create or replace function public.price_label(price_id text) returns text language sql stable set search_path = '' as $$ select 'free' $$",
             "0004_price_label.sql: function public.price_label(price_id text): definition differs"),
        ]),
        Project(name: "notes", drifts: [
            (#"drop policy "Users upload their own attachments" on storage.objects"#,
             #"0002_buckets.sql: table storage.objects policies: "Users upload their own attachments" is missing"#),
            ("grant select on public.notes to anon", ": table public.notes grants: extra anon SELECT that the files do not create"),
            ("create or replace function public.search_notes(query text) returns setof public.notes language sql stable set search_path = '' as $$ select * from public.notes $$",
             "0004_search.sql: function public.search_notes(query text): definition differs"),
        ]),
        Project(name: "teams", drifts: [
            (#"drop policy "Users see their teammates" on app.account_user"#,
             #"0003_policies.sql: table app.account_user policies: "Users see their teammates" is missing"#),
            ("grant select on app.accounts to anon", "0003_policies.sql: table app.accounts grants: extra anon SELECT that the files do not create"),
            ("create or replace function app.set_timestamps() returns trigger language plpgsql set search_path = '' as $$ begin return new; end; $$",
             "0004_triggers.sql: function app.set_timestamps(): definition differs"),
        ]),
    ]

    /// The platform's realtime publication, which the chat's files add tables to (Supabase makes it for every project).
    func platform(_ db: TestDatabase) throws {
        try db.connectAsAdmin().execute("create publication supabase_realtime; alter publication supabase_realtime owner to postgres")
    }

    func steward(_ arguments: [String], _ db: TestDatabase, _ project: Project) throws -> StewardProcess.Result {
        try StewardProcess.run(arguments + ["--database-url", db.url, "--migrations", project.folder])
    }

    @Test("migrate, then verify exits 0; each of three hand-made drifts is named with exit 2", arguments: projects)
    func cleanThenDrift(project: Project) throws {
        try withTestDatabase { db in
            try platform(db)
            let migrate = try steward(["migrate"], db, project)
            #expect(migrate.exitCode == 0, "\(migrate.output)")
            let clean = try steward(["verify"], db, project)
            #expect(clean.exitCode == 0, "\(clean.output)")
            #expect(clean.stdout.hasPrefix("ok: the database matches the"), "\(clean.stdout)")
            #expect(!clean.stdout.contains("stricter"), "\(clean.stdout)")
            for drift in project.drifts {
                try db.connect().execute(drift.sql)
                let result = try steward(["verify"], db, project)
                #expect(result.exitCode == 2, "\(drift.sql): \(result.output)")
                #expect(result.stdout.contains(drift.line), "\(drift.sql): \(result.stdout)")
            }
            let all = try steward(["verify", "--json"], db, project)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any], "\(all.output)")
            #expect((json["differences"] as? [String])?.count == 3, "\(all.stdout)")
        }
    }

    @Test("applied by hand with psql, then migrate --adopt records every file and verify exits 0", arguments: projects)
    func adoptAfterPsql(project: Project) throws {
        try withTestDatabase { db in
            try platform(db)
            let files = try FileManager.default.contentsOfDirectory(atPath: project.folder).filter { $0.hasSuffix(".sql") }.sorted()
            for file in files {
                let psql = try StewardProcess.runProgram("/usr/bin/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db.url, "-f", project.folder + "/" + file],
                                                         environment: [:])
                #expect(psql.exitCode == 0, "psql -f \(file): \(psql.output)")
            }
            let before = try CatalogDigest.of(db.connect())
            let adopt = try steward(["migrate", "--adopt"], db, project)
            #expect(adopt.exitCode == 0, "\(adopt.output)")
            for file in files { #expect(adopt.stdout.contains("adopted  \(file)"), "\(file): \(adopt.stdout)") }
            #expect(try CatalogDigest.of(db.connect()) == before, "--adopt changed the live catalog")
            let verify = try steward(["verify"], db, project)
            #expect(verify.exitCode == 0, "\(verify.output)")
            #expect(try ShadowDatabases.left(by: adopt, db).isEmpty)
        }
    }

    @Test("a history without records (an older Steward's) verifies clean after the upgrade: the shadow builds the record once, and says so",
          arguments: projects)
    func upgradeBuildsRecord(project: Project) throws {
        try withTestDatabase { db in
            try platform(db)
            #expect(try steward(["migrate"], db, project).exitCode == 0)
            try db.connect().execute("update steward.schema_migrations set catalog_recorded = null; delete from steward.schema_record")
            let before = try CatalogDigest.of(db.connect())
            let first = try steward(["verify"], db, project)
            #expect(first.exitCode == 0, "\(first.output)")
            #expect(first.stdout.contains("note: built the record of"), "\(first.stdout)")
            #expect(try CatalogDigest.of(db.connect()) == before, "verify changed the live catalog")
            let second = try steward(["verify"], db, project)
            #expect(second.exitCode == 0 && !second.stdout.contains("note: built the record"), "\(second.output)")
            #expect(try db.connect().query("select count(*) from steward.schema_migrations where catalog_recorded = 'shadow'").scalar(Int.self)
                    == (try FileManager.default.contentsOfDirectory(atPath: project.folder).filter { $0.hasSuffix(".sql") }.count))
        }
    }
}

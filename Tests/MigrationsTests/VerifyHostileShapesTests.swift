import Foundation
import Postgres
import Testing
import TestSupport

/// Shapes a reviewer found that broke an earlier `verify` (false drift, a failed shadow rebuild, a drift missed, a
/// live change): each is a small project, a way the files got there (applied by Steward, applied and then its
/// record lost as after an upgrade, or applied by hand and adopted), what a person did by hand afterwards, and what
/// `verify` must answer.
@Suite("verify on shapes that once broke it", .needsCluster)
struct VerifyHostileShapesTests {
    enum Route: String, Sendable { case applied, upgraded, adopted }

    struct Shape: Sendable, CustomStringConvertible {
        let name: String
        /// Run as the cluster superuser first: the platform's side of things.
        var platform = ""
        let files: [String: String]
        var routes: [Route] = [.applied, .upgraded, .adopted]
        /// Run as the cluster superuser after the files are in, before the first verify.
        var afterApply = ""
        /// Run by hand (as postgres, or as the superuser when prefixed `admin:`) after the files, then verify again.
        var byHand = ""
        /// What verify must print after `byHand` (nil: it must stay clean, exit 0).
        var drift: String?
        var description: String { name }
    }

    static let shapes: [Shape] = [
        Shape(name: "a storage policy with a name of 45 or more characters",
              files: ["0001_p.sql": "create policy \"Avatar images are readable by signed in users of the app.\" on storage.objects for select to authenticated using (bucket_id = 'avatars');\n"],
              byHand: "drop policy \"Avatar images are readable by signed in users of the app.\" on storage.objects",
              drift: "table storage.objects policies: \"Avatar images are readable by signed in users of the app.\" is missing"),
        Shape(name: "a later file's alter default privileges does not reach the functions made before it",
              files: ["0001_f.sql": "create function public.ping() returns int language sql as $$ select 1 $$;\n",
                      "0002_d.sql": "alter default privileges in schema public revoke execute on functions from anon;\n"],
              byHand: "grant execute on function public.ping() to authenticator",
              drift: "function public.ping() grants: extra authenticator EXECUTE that the files do not create"),
        Shape(name: "a file's create schema if not exists on the platform's extensions schema",
              platform: "create schema extensions; create extension \"uuid-ossp\" with schema extensions; grant usage on schema extensions to postgres",
              files: ["0001_e.sql": "create schema if not exists extensions;\ncreate table public.things (id uuid primary key default extensions.uuid_generate_v4());\n"],
              byHand: "alter table public.things alter column id drop default",
              drift: "table public.things columns: id differs: live uuid not null, files uuid not null default extensions.uuid_generate_v4()"),
        Shape(name: "a storage policy created and then renamed by a later file",
              files: ["0001_p.sql": "create policy \"read avatars\" on storage.objects for select to authenticated using (bucket_id = 'avatars');\n",
                      "0002_r.sql": "alter policy \"read avatars\" on storage.objects rename to \"Signed-in users read avatars\";\n"]),
        Shape(name: "a bucket made in the dashboard before a file that inserts it on conflict do nothing",
              platform: "insert into storage.buckets (id, name, public, file_size_limit) values ('media', 'media', false, 52428800)",
              files: ["0001_b.sql": "insert into storage.buckets (id, name, public) values ('media', 'media', true) on conflict (id) do nothing;\n"]),
        Shape(name: "a trigger the platform adds to a table a file put a trigger on is not drift",
              files: ["0001_t.sql": """
                  create function public.track() returns trigger language plpgsql as $$ begin return new; end $$;
                  create trigger track_upload after insert on storage.objects for each row execute function public.track();

                  """],
              byHand: "admin:create function storage.platform_noop() returns trigger language plpgsql as $$ begin return new; end $$; "
                + "create trigger objects_platform_trigger before insert on storage.objects for each row execute function storage.platform_noop()"),
        Shape(name: "a file's trigger on a platform table dropped by hand is drift",
              files: ["0001_t.sql": """
                  create function public.track() returns trigger language plpgsql as $$ begin return new; end $$;
                  create trigger track_upload after insert on storage.objects for each row execute function public.track();

                  """],
              byHand: "admin:drop trigger track_upload on storage.objects",
              drift: "table storage.objects triggers: track_upload is missing"),
        Shape(name: "rights on objects that had only their owner's: a schema, a table, a function",
              files: ["0001_private.sql": """
                  create schema private;
                  create table private.secrets (id int primary key, secret text);
                  create function private.f() returns int language sql as $$ select 1 $$;
                  revoke execute on function private.f() from public;

                  """],
              byHand: "grant usage on schema private to anon; grant select on private.secrets to anon; grant execute on function private.f() to anon",
              drift: "schema private grants: extra anon USAGE that the files do not create"),
        Shape(name: "a policy added by hand on storage.objects beside the files' own",
              files: ["0001_docs.sql": """
                  insert into storage.buckets (id, name, public) values ('private-docs', 'private-docs', false);
                  create policy "owner reads docs" on storage.objects for select to authenticated using (bucket_id = 'private-docs' and owner = (select auth.uid()));

                  """],
              byHand: "create policy \"anyone reads docs\" on storage.objects for select to anon using (bucket_id = 'private-docs')",
              drift: "table storage.objects policies: extra \"anyone reads docs\""),
        Shape(name: "a role setting and a role a file makes are not run in the shadow (the live server keeps its own)",
              files: ["0001_roles.sql": """
                  do $$ begin if not exists (select 1 from pg_roles where rolname = 'steward_test_reporting') then create role steward_test_reporting nologin; end if; end $$;
                  alter role steward_test_reporting set statement_timeout = '8s';
                  create table public.reports (id int primary key);
                  grant select on public.reports to steward_test_reporting;

                  """],
              routes: [.applied, .upgraded],
              afterApply: "alter role steward_test_reporting set statement_timeout = '20s'"),
        Shape(name: "a grant option taken away by hand is stricter, not drift",
              files: ["0001_g.sql": "create table public.shared (id int);\ngrant select on public.shared to service_role with grant option;\n"],
              byHand: "revoke grant option for select on public.shared from service_role"),
    ]

    func steward(_ arguments: [String], _ db: TestDatabase, _ folder: MigrationFolder) throws -> StewardProcess.Result {
        try StewardProcess.run(arguments + ["--database-url", db.url, "--migrations", folder.path])
    }

    func byHand(_ sql: String, _ db: TestDatabase) throws {
        guard !sql.isEmpty else { return }
        if sql.hasPrefix("admin:") { try db.connectAsAdmin().execute(String(sql.dropFirst(6))) } else { try db.connect().execute(sql) }
    }

    @Test("each shape: clean by every route, then what was done by hand is named (or, where it is not drift, not)", arguments: shapes)
    func shape(_ shape: Shape) throws {
        defer {
            if shape.files.values.contains(where: { $0.contains("steward_test_reporting") }) {
                _ = try? Connection(ConnectionString(TestEnvironment.adminURL + "/postgres")).execute("drop role if exists steward_test_reporting")
            }
        }
        for route in shape.routes {
            try withTestDatabase { db in
                if !shape.platform.isEmpty { try db.connectAsAdmin().execute(shape.platform) }
                let folder = try MigrationFolder(files: shape.files)
                defer { folder.delete() }
                switch route {
                case .applied, .upgraded:
                    let migrate = try steward(["migrate"], db, folder)
                    #expect(migrate.exitCode == 0, "\(route): \(migrate.output)")
                    if route == .upgraded {
                        try db.connect().execute("update steward.schema_migrations set catalog_recorded = null; delete from steward.schema_record")
                    }
                case .adopted:
                    // By hand as the project's postgres role, as the SQL editor or psql would.
                    for name in shape.files.keys.sorted() { try db.connect().execute(try folder.read(name)) }
                    let adopt = try steward(["migrate", "--adopt"], db, folder)
                    #expect(adopt.exitCode == 0 && adopt.stdout.contains("adopted"), "\(route): \(adopt.output)")
                }
                if !shape.afterApply.isEmpty { try db.connectAsAdmin().execute(shape.afterApply) }
                // The server-wide settings this shape's files touch (other shapes run at the same time).
                let ownRoles = shape.files.values.contains { $0.contains("steward_test_reporting") } ? ["steward_test_reporting"] : [String]()
                let settingsBefore = try db.connectAsAdmin().query("select coalesce(array_agg(setconfig::text order by setrole, setdatabase), '{}') from pg_db_role_setting where setdatabase = (select oid from pg_database where datname = current_database()) or (setdatabase = 0 and setrole = any(select oid from pg_roles where rolname = any($1)))", [ownRoles]).scalar([String].self)
                let clean = try steward(["verify"], db, folder)
                #expect(clean.exitCode == 0, "\(route): \(clean.output)")
                #expect(try db.connectAsAdmin().query("select coalesce(array_agg(setconfig::text order by setrole, setdatabase), '{}') from pg_db_role_setting where setdatabase = (select oid from pg_database where datname = current_database()) or (setdatabase = 0 and setrole = any(select oid from pg_roles where rolname = any($1)))", [ownRoles]).scalar([String].self)
                        == settingsBefore, "\(route): verify changed a server-wide setting")
                guard !shape.byHand.isEmpty else { return }
                try byHand(shape.byHand, db)
                let after = try steward(["verify"], db, folder)
                if let drift = shape.drift {
                    #expect(after.exitCode == 2 && after.stdout.contains(drift), "\(route): \(after.output)")
                } else {
                    #expect(after.exitCode == 0, "\(route): \(after.output)")
                }
            }
        }
    }
}

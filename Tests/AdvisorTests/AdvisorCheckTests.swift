import Migrations
import Advisor
import Foundation
import Postgres
import Testing
import TestSupport

/// Each check against a real database: the insecure object is reported by name, the fixed one is not.
@Suite("security advisor checks", .needsCluster)
struct AdvisorCheckTests {
    /// One check's case: what builds the insecure object, what fixes it, and the object the finding names.
    struct Case: Sendable, CustomTestStringConvertible {
        let check: String
        let object: String
        let insecure: String
        let fix: String
        /// The exposed schemas the advisor is given.
        var schemas = ["public"]
        var testDescription: String { check }
    }

    /// pg_graphql's row in pg_extension: the local cluster does not ship the extension, and the lints ask only whether it is installed.
    static let graphQLInstalled = "insert into pg_catalog.pg_extension (oid, extname, extowner, extnamespace, extrelocatable, extversion) values (999999, 'pg_graphql', 10, 'public'::regnamespace, false, '1.5')"

    static let legacyTable = (try? String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8)) ?? ""

    static let cases: [Case] = [
        Case(check: "rls_disabled_in_public", object: "public.notes",
             insecure: "create table public.notes (id int primary key, body text)",
             fix: "alter table public.notes enable row level security; create policy p on public.notes for select using (true)"),
        Case(check: "policy_exists_rls_disabled", object: "public.notes",
             insecure: "create table public.notes (id int primary key); create policy p on public.notes for select using (true)",
             fix: "alter table public.notes enable row level security"),
        Case(check: "rls_enabled_no_policy", object: "public.notes",
             insecure: "create table public.notes (id int primary key); alter table public.notes enable row level security",
             fix: "create policy p on public.notes for select to authenticated using (true)"),
        Case(check: "function_search_path_mutable", object: "public.f()",
             insecure: "create function public.f() returns int language sql as 'select 1'",
             fix: "alter function public.f() set search_path = ''"),
        Case(check: "auth_rls_initplan", object: "public.notes.own",
             insecure: "create table public.notes (id int primary key, owner uuid); alter table public.notes enable row level security; create policy own on public.notes for select to authenticated using (owner = auth.uid())",
             fix: "alter policy own on public.notes using (owner = (select auth.uid()))"),
        Case(check: "rls_references_user_metadata", object: "public.notes.admins",
             insecure: "create table public.notes (id int primary key); alter table public.notes enable row level security; create policy admins on public.notes for select to authenticated using (((select auth.jwt()) -> 'user_metadata' ->> 'role') = 'admin')",
             fix: "alter policy admins on public.notes using (((select auth.jwt()) -> 'app_metadata' ->> 'role') = 'admin')"),
        Case(check: "auth_users_exposed", object: "public.emails",
             insecure: "create view public.emails with (security_invoker = on) as select id, email from auth.users; grant select on public.emails to anon",
             fix: "revoke all on public.emails from anon, authenticated, public"),
        Case(check: "security_definer_view", object: "public.v",
             insecure: "create view public.v as select 1 as one; grant select on public.v to anon",
             fix: "alter view public.v set (security_invoker = on)"),
        Case(check: "public_bucket_allows_listing", object: "storage.pics",
             insecure: "insert into storage.buckets (id, name, public) values ('pics', 'pics', true); create policy list_pics on storage.objects for select using (bucket_id = 'pics')",
             fix: "drop policy list_pics on storage.objects"),
        Case(check: "anon_security_definer_function_executable", object: "public.g()",
             insecure: "create function public.g() returns int language sql security definer set search_path = '' as 'select 1'; grant execute on function public.g() to anon",
             fix: "revoke execute on function public.g() from anon, public"),
        Case(check: "authenticated_security_definer_function_executable", object: "public.g()",
             insecure: "create function public.g() returns int language sql security definer set search_path = '' as 'select 1'; grant execute on function public.g() to authenticated",
             fix: "revoke execute on function public.g() from authenticated, public"),
        Case(check: "multiple_permissive_policies", object: "public.notes",
             insecure: "create table public.notes (id int primary key); alter table public.notes enable row level security; create policy a on public.notes for select to anon using (true); create policy b on public.notes for select to anon using (id > 0)",
             fix: "drop policy b on public.notes"),
        Case(check: "unindexed_foreign_keys", object: "public.child.child_parent_fkey",
             insecure: "create table public.parent (id int primary key); create table public.child (id int primary key, parent int references public.parent)",
             fix: "create index on public.child (parent)"),
        Case(check: "duplicate_index", object: "public.notes",
             insecure: "create table public.notes (id int primary key, t text); create index i1 on public.notes (t); create index i2 on public.notes (t)",
             fix: "drop index public.i2"),
        Case(check: "rls_table_truncate_granted", object: "public.notes",
             insecure: "create table public.notes (id int primary key); alter table public.notes enable row level security; grant truncate on public.notes to authenticated",
             fix: "revoke truncate on public.notes from anon, authenticated, public"),
        Case(check: "anon_readable_emails", object: "public.contacts",
             insecure: "create table public.contacts (id int primary key, mail text); insert into public.contacts values (1, 'a@example.com'); grant select on public.contacts to anon",
             fix: "revoke all on public.contacts from anon, public"),
        Case(check: "storage_insert_allows_anon", object: "storage.objects.up",
             insecure: "create policy up on storage.objects for insert with check (bucket_id = 'x')",
             fix: "alter policy up on storage.objects to authenticated"),
        Case(check: "policy_casts_text_column_to_uuid", object: "public.User.own",
             insecure: legacyTable + "; alter table public.\"User\" enable row level security; create policy own on public.\"User\" for select to authenticated using (\"userID\"::uuid = (select auth.uid()))",
             fix: "alter policy own on public.\"User\" using (\"userID\" = (select auth.uid())::text)"),
        Case(check: "security_definer_search_path_mutable", object: "public.h()",
             insecure: "create function public.h() returns int language sql security definer as 'select 1'",
             fix: "alter function public.h() set search_path = ''"),
        Case(check: "rls_policy_always_true", object: "public.notes.edit",
             insecure: "create table public.notes (id int primary key); alter table public.notes enable row level security; create policy edit on public.notes for update to authenticated using (true) with check (true)",
             fix: "alter policy edit on public.notes using (id > 0) with check (id > 0)"),
        Case(check: "no_primary_key", object: "public.notes",
             insecure: "create table public.notes (id int)",
             fix: "alter table public.notes add primary key (id)"),
        Case(check: "materialized_view_in_api", object: "public.mv",
             insecure: "create materialized view public.mv as select 1 as one; grant select on public.mv to anon",
             fix: "revoke all on public.mv from anon, authenticated, public"),
        Case(check: "foreign_table_in_api", object: "public.ft",
             insecure: "create schema fdw; create extension file_fdw schema fdw; create server files foreign data wrapper file_fdw; create foreign table public.ft (line text) server files options (filename '/dev/null'); grant select on public.ft to authenticated",
             fix: "revoke all on public.ft from anon, authenticated, public"),
        Case(check: "extension_in_public", object: "public.citext",
             insecure: "create extension citext schema public",
             fix: "create schema extensions; alter extension citext set schema extensions"),
        Case(check: "extension_versions_outdated", object: "extensions.hstore",
             insecure: "create schema extensions; create extension hstore schema extensions version '1.4'",
             fix: "alter extension hstore update"),
        Case(check: "insecure_queue_exposed_in_api", object: "pgmq.q_jobs",
             insecure: "create schema pgmq; create table pgmq.q_jobs (msg_id bigint primary key, message jsonb); grant usage on schema pgmq to anon; grant select on pgmq.q_jobs to anon",
             fix: "alter table pgmq.q_jobs enable row level security", schemas: ["public", "pgmq_public"]),
        Case(check: "pg_graphql_anon_table_exposed", object: "public.notes",
             insecure: graphQLInstalled + "; create table public.notes (id int primary key); grant select on public.notes to anon",
             fix: "revoke all on public.notes from anon, public"),
        Case(check: "pg_graphql_authenticated_table_exposed", object: "public.notes",
             insecure: graphQLInstalled + "; create table public.notes (id int primary key, body text); grant select (id) on public.notes to authenticated",
             fix: "revoke all on public.notes from authenticated, public"),
        Case(check: "fkey_to_auth_unique", object: "public.contacts.contacts_phone_fkey",
             insecure: "create table public.contacts (id int primary key, phone text references auth.users (phone))",
             fix: "alter table public.contacts drop constraint contacts_phone_fkey"),
        Case(check: "sensitive_columns_exposed", object: "public.accounts",
             insecure: "create table public.accounts (id int primary key, \"Password\" text, api_key text); grant select on public.accounts to anon",
             fix: "alter table public.accounts enable row level security"),
        Case(check: "unsupported_reg_types", object: "public.notes.handler",
             insecure: "create table public.notes (id int primary key, handler regproc)",
             fix: "alter table public.notes alter column handler type text"),
        Case(check: "unused_index", object: "public.notes_t",
             insecure: "create table public.notes (id int primary key, t text); create index notes_t on public.notes (t)",
             fix: "drop index public.notes_t"),
        // 30 MB of rows, all but 300 deleted and analyzed (autovacuum kept off so it cannot truncate the table first).
        Case(check: "table_bloat", object: "public.big",
             insecure: "create table public.big (id int primary key, pad text) with (autovacuum_enabled = false); insert into public.big select g, repeat('x', 500) from generate_series(1, 60000) g; delete from public.big where id > 300; analyze public.big",
             fix: "vacuum full public.big"),
    ]

    func findings(_ db: TestDatabase, schemas: [String] = ["public"]) throws -> [AdvisorFinding] {
        try SecurityAdvisor(schemas: schemas).run(db.connect()).findings
    }

    @Test("every check reports its insecure object and not the fixed one", arguments: cases)
    func check(_ c: Case) throws {
        try withTestDatabase { db in
            let admin = try db.connectAsAdmin()
            _ = try admin.execute(c.insecure)
            let before = try findings(db, schemas: c.schemas).filter { $0.name == c.check }.map(\.object)
            #expect(before.contains(c.object), "\(c.check) found \(before)")
            _ = try admin.execute(c.fix)
            let after = try findings(db, schemas: c.schemas).filter { $0.name == c.check }.map(\.object)
            #expect(!after.contains(c.object), "\(c.check) still reports \(after)")
        }
    }

    @Test("every check in the catalog has a case")
    func everyCheckCovered() {
        #expect(Set(AdvisorCatalog.checks.map(\.name)) == Set(Self.cases.map(\.check)))
    }

    /// A FOR ALL policy counts for every action and `public` for anon and authenticated: a second, looser UPDATE
    /// policy for authenticated is two permissive policies for (authenticated, update), as the Security Advisor says.
    @Test("multiple_permissive_policies: a FOR ALL policy for public and an UPDATE policy for authenticated")
    func multiplePermissiveForAll() throws {
        try withTestDatabase { db in
            try db.connectAsAdmin().execute("""
                create table public.notes (id int primary key, owner uuid); alter table public.notes enable row level security;
                create policy "own notes" on public.notes for all using (auth.uid() = owner); create policy "anyone can edit" on public.notes for update to authenticated using (true) with check (true);
                """)
            let found = try findings(db).filter { $0.name == "multiple_permissive_policies" }
            #expect(found.map(\.object) == ["public.notes"], "\(found)")
            #expect(found.first?.detail == "role authenticated, update: anyone can edit, own notes", "\(found)")
        }
    }

    /// The dashboard lists the quickstart's trigger function under both lints; so does Steward, at info level, saying
    /// why it cannot be called and which opt-in revokes EXECUTE.
    @Test("handle_new_user(): both SECURITY DEFINER lints at info level, with the reason and the opt-in; gone after api-hardening")
    func triggerFunctionExecutable() throws {
        try withTestDatabase { db in
            try ProjectMigration.migrate(db)
            let lints = ["anon_security_definer_function_executable", "authenticated_security_definer_function_executable"]
            let before = try findings(db).filter { lints.contains($0.name) && $0.object == "public.handle_new_user()" }
            #expect(before.map(\.name).sorted() == lints, "\(before)")
            for finding in before {
                #expect(finding.level == .info)
                #expect(finding.detail.contains("trigger function: calling it directly fails"), "\(finding.detail)")
                #expect(finding.detail.contains("sql/optional/api-hardening"), "\(finding.detail)")
            }
            try ProjectMigration.migrate(db, include: ["api-hardening"])
            #expect(try findings(db).filter { lints.contains($0.name) }.isEmpty)
        }
    }

    @Test("the run changes nothing: the catalog is the same before and after, and it runs in a read-only transaction")
    func readOnly() throws {
        try withTestDatabase { db in
            let admin = try db.connectAsAdmin()
            for c in Self.cases.prefix(6) { _ = try? admin.execute(c.insecure.replacingOccurrences(of: "public.notes", with: "public.notes_\(c.check.count)")) }
            let snapshot = """
                select md5(string_agg(x, ',' order by x)) from (
                  select c.oid::text || c.relname || c.relrowsecurity || coalesce(c.relacl::text, '') as x from pg_class c
                  union all select p.oid::text || p.polname || coalesce(pg_get_expr(p.polqual, p.polrelid), '') from pg_policy p
                  union all select p.oid::text || p.proname || coalesce(p.proacl::text, '') || coalesce(p.proconfig::text, '') from pg_proc p
                  union all select n.nspname || coalesce(n.nspacl::text, '') from pg_namespace n) s
                """
            let c = try db.connect()
            let before = try c.query(unsafeSQL: snapshot).rows[0].decode(String.self, at: 0)
            let report = try SecurityAdvisor().run(c)
            #expect(!report.findings.isEmpty)
            #expect(report.failedChecks.isEmpty, "\(report.failedChecks)")
            #expect(try c.query(unsafeSQL: snapshot).rows[0].decode(String.self, at: 0) == before)
            #expect(c.transactionStatus == .idle)
        }
    }

    @Test("ignore rules: the reason is required and the rule silences only its own object")
    func ignoreRules() throws {
        guard case .success(let rule) = AdvisorIgnoreRule.parse("rls_disabled_in_public:public.notes  # internal queue, never exposed") else {
            Issue.record("rule not parsed"); return
        }
        #expect(rule.reason == "internal queue, never exposed")
        if case .success = AdvisorIgnoreRule.parse("rls_disabled_in_public:public.notes") { Issue.record("a rule without a reason was accepted") }
        if case .success = AdvisorIgnoreRule.parse("no_such_check:public.notes # x") { Issue.record("an unknown check was accepted") }
        try withTestDatabase { db in
            _ = try db.connectAsAdmin().execute("create table public.notes (id int); create table public.other (id int)")
            let found = try SecurityAdvisor(ignore: [rule]).run(db.connect()).findings.filter { $0.name == "rls_disabled_in_public" }
            #expect(found.first { $0.object == "public.notes" }?.ignoredBecause == "internal queue, never exposed")
            #expect(found.first { $0.object == "public.other" }?.ignoredBecause == nil)
        }
    }

    @Test("the store: new once, resolved when fixed, new again when it comes back")
    func store() throws {
        try withTestDatabase { db in
            let c = try db.connect()
            let admin = try db.connectAsAdmin()
            let store = AdvisorStore()
            try HistoryStore(connection: c).prepare()
            try HistoryStore(connection: c).prepare()
            _ = try admin.execute("create table public.notes (id int)")
            func pass() throws -> (new: [String], resolved: Int) {
                let r = try store.record(SecurityAdvisor().run(c).findings, c, dryRun: false)
                return (r.findings.filter(\.isNew).map(\.key), r.resolved)
            }
            #expect(try pass().new.contains("rls_disabled_in_public:public.notes"))
            #expect(try pass().new.isEmpty)
            _ = try admin.execute("alter table public.notes enable row level security")
            #expect(try pass().resolved >= 1)
            _ = try admin.execute("alter table public.notes disable row level security")
            #expect(try pass().new.contains("rls_disabled_in_public:public.notes"))
        }
    }
}

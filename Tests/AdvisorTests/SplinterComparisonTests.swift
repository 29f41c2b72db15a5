import Advisor
import Foundation
import Postgres
import Testing
import TestSupport

/// Side by side with Supabase's own linter (splinter) on the same fixtures, by lint name and object. Splinter cannot
/// be fetched at test time, so `splinterReports` is what its SQL reports on these fixtures, worked out from each
/// lint's query and written in Steward's object naming (`schema.table`, `schema.table.policy`, `schema.function()`).
@Suite("the advisor next to splinter on the same fixtures", .needsCluster)
struct SplinterComparisonTests {
    /// Splinter's 28 lint names.
    static let splinterLints: Set<String> = [
        "anon_security_definer_function_executable", "auth_rls_initplan", "auth_users_exposed", "authenticated_security_definer_function_executable",
        "duplicate_index", "extension_in_public", "extension_versions_outdated", "fkey_to_auth_unique", "foreign_table_in_api",
        "function_search_path_mutable", "insecure_queue_exposed_in_api", "materialized_view_in_api", "multiple_permissive_policies",
        "no_primary_key", "pg_graphql_anon_table_exposed", "pg_graphql_authenticated_table_exposed", "policy_exists_rls_disabled",
        "public_bucket_allows_listing", "rls_disabled_in_public", "rls_enabled_no_policy", "rls_policy_always_true",
        "rls_references_user_metadata", "security_definer_view", "sensitive_columns_exposed", "table_bloat", "unindexed_foreign_keys",
        "unsupported_reg_types", "unused_index",
    ]

    /// The quickstart on a pre-2026 project, the older tutorial's `User` table, and one insecure object per lint,
    /// made as the app's owner makes them (so the old default grants to anon and authenticated apply).
    static let fixtures = """
        create table public.notes (id int primary key, owner uuid); alter table public.notes enable row level security;
        create policy "own notes" on public.notes for all using (auth.uid() = owner);
        create policy "anyone can edit" on public.notes for update to authenticated using (true) with check (true);
        create index notes_owner_1 on public.notes (owner); create index notes_owner_2 on public.notes (owner);
        create table public.log (message text); grant select on public.log to anon;
        create materialized view public.totals as select count(*) as n from public.notes; grant select on public.totals to anon;
        create view public.recent as select id from public.notes; grant select on public.recent to anon;
        create function public.f() returns int language sql as 'select 1';
        create function public.g() returns int language sql security definer set search_path = '' as 'select 1';
        create table public.child (id int primary key, note int references public.notes); alter table public.child enable row level security;
        create table public.secrets (id int primary key, api_key text); grant select on public.secrets to anon;
        create table public.phones (id int primary key, phone text references auth.users (phone)); alter table public.phones enable row level security;
        create policy own on public.phones for select to authenticated using (id = 0);
        create table public.handlers (id int primary key, fn regproc); alter table public.handlers enable row level security;
        create policy own on public.handlers for select to authenticated using (id = 0);
        create table public.flags (id int primary key); grant select on public.flags to anon;
        create policy meta on public.flags for select using ((select auth.jwt()) -> 'user_metadata' ->> 'admin' = 'true');
        """

    /// What only the cluster's superuser can make here: extensions, and a view reading auth.users.
    static let adminFixtures = """
        create extension citext schema public; create schema extensions; create extension hstore schema extensions version '1.4';
        create view public.user_emails as select id, email from auth.users; grant select on public.user_emails to anon;
        """

    /// What splinter reports on the fixtures (lint name, object), for the lints it has.
    static let splinterReports: Set<String> = [
        // The quickstart: its sign-up trigger function is SECURITY DEFINER and PUBLIC may execute it.
        "anon_security_definer_function_executable public.handle_new_user()",
        "authenticated_security_definer_function_executable public.handle_new_user()",
        // The User table: RLS off, readable by anon.
        "rls_disabled_in_public public.User",
        // notes: FOR ALL for public plus UPDATE for authenticated; auth.uid() per row; USING/WITH CHECK (true) for UPDATE;
        // two identical indexes, neither scanned.
        "multiple_permissive_policies public.notes",
        "auth_rls_initplan public.notes.own notes",
        "rls_policy_always_true public.notes.anyone can edit",
        "duplicate_index public.notes",
        "unused_index public.notes_owner_1", "unused_index public.notes_owner_2",
        // log: RLS off and no primary key.
        "rls_disabled_in_public public.log", "no_primary_key public.log",
        "materialized_view_in_api public.totals",
        "security_definer_view public.recent",
        "function_search_path_mutable public.f()",
        "anon_security_definer_function_executable public.g()", "authenticated_security_definer_function_executable public.g()",
        // child: RLS on without a policy, a foreign key without an index.
        "rls_enabled_no_policy public.child", "unindexed_foreign_keys public.child.child_note_fkey",
        // secrets: RLS off, readable, a column named api_key.
        "rls_disabled_in_public public.secrets", "sensitive_columns_exposed public.secrets",
        "extension_in_public public.citext",
        "extension_versions_outdated extensions.hstore",
        // phones: a foreign key to auth.users' unique phone, without an index.
        "fkey_to_auth_unique public.phones.phones_phone_fkey", "unindexed_foreign_keys public.phones.phones_phone_fkey",
        "unsupported_reg_types public.handlers.fn",
        // flags: a policy but RLS off, and the policy trusts user_metadata.
        "policy_exists_rls_disabled public.flags", "rls_disabled_in_public public.flags", "rls_references_user_metadata public.flags.meta",
        // A view of auth.users anon may read, running with its owner's rights.
        "auth_users_exposed public.user_emails", "security_definer_view public.user_emails",
    ]

    @Test("the same lint names on the same objects as splinter")
    func sameAsSplinter() throws {
        try withTestDatabase(.legacy) { db in
            try ProjectMigration.migrate(db)
            let owner = try db.connect()
            try owner.execute(try String(contentsOfFile: TestEnvironment.root + "/sql/demo/legacy_user_table.sql", encoding: .utf8))
            try owner.execute(Self.fixtures)
            try db.connectAsAdmin().execute(Self.adminFixtures)
            let steward = Set(try SecurityAdvisor().run(db.connect()).findings.filter { Self.splinterLints.contains($0.name) }.map { "\($0.name) \($0.object)" })
            #expect(steward.subtracting(Self.splinterReports).sorted() == [], "Steward only")
            #expect(Self.splinterReports.subtracting(steward).sorted() == [], "splinter only")
            let names = Set(Self.splinterReports.map { String($0.prefix { $0 != " " }) })
            #expect(names.count >= 20, "\(names.count) lint names compared")
        }
    }
}

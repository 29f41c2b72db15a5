import Advisor
import Migrations
import Postgres

/// The Supabase user-management app's schema knowledge for `verify`: the quickstart's known weaknesses as advice, and
/// which opt-in hardening is enforced, read from the live catalog. Its security advice is a few of the security
/// advisor's checks (`Advisor`), asked for by name, so `verify` and `steward advise` cannot disagree.
public struct SupabaseAdvisor: SchemaAdvisor {
    public init() {}

    /// Whether the opt-in hardening (sql/optional/storage-hardening, sql/optional/username-enforcement) is present.
    public func enforcement(_ connection: Connection) throws -> [String] {
        guard try connection.query("select to_regclass('public.profiles') is not null").scalar(Bool.self) else { return [] }
        // The quickstart's lines only where its objects are: the avatars bucket, a username column.
        let present = try connection.query("""
            select to_regclass('storage.buckets') is not null and exists (select 1 from storage.buckets where id = 'avatars'),
                   exists (select 1 from pg_attribute where attrelid = 'public.profiles'::regclass and attname = 'username' and not attisdropped)
            """).firstRow()
        let avatars = try present.decode(Bool.self, at: 0), usernames = try present.decode(Bool.self, at: 1)
        let row = try connection.query("""
            select exists (select 1 from pg_index i where i.indrelid = 'public.profiles'::regclass and i.indisunique and i.indisvalid
                           and pg_get_indexdef(i.indexrelid) ~* 'lower\\(normalize\\(username'),
                   exists (select 1 from pg_trigger t where t.tgrelid = 'public.profiles'::regclass and t.tgname = 'enforce_username_format'
                           and t.tgenabled <> 'D')
            """).firstRow()
        let storage = try connection.query("""
            select exists (select 1 from pg_policy where polrelid = to_regclass('storage.objects') and polcmd in ('d', '*') and polpermissive
                           and coalesce(pg_get_expr(coalesce(polqual, polwithcheck), polrelid), '') <> 'false')
            """).firstRow()
        var lines: [String] = []
        if avatars {
            lines.append(try storage.decode(Bool.self, at: 0)
                ? "users can delete their own avatars: yes (a DELETE policy on storage.objects)"
                : "users can delete their own avatars: no (opt in: sql/optional/storage-hardening)")
            lines.append(try uploadLine(connection))
        }
        if usernames {
            lines.append(try row.decode(Bool.self, at: 0)
                ? "usernames unique ignoring case and width: enforced (profiles_username_normalized_key)"
                : "usernames unique ignoring case and width: not enforced (opt in: sql/optional/username-enforcement)")
            lines.append(try row.decode(Bool.self, at: 1)
                ? "username characters and length: enforced at write time (trigger enforce_username_format)"
                : "username characters and length: not enforced at write time (opt in: sql/optional/username-enforcement)")
        }
        return lines
    }

    /// A policy check (SQL over `p`) that a request without a signed-in user cannot pass, as the advisor judges it.
    static let needsSignIn = AdvisorCatalog.policyNeedsSignIn

    /// Who may upload, from what the live INSERT policies on storage.objects allow (a permissive policy whose check is
    /// not plainly false; the service role bypasses row level security and is not counted; a check that needs a
    /// signed-in user counts for `authenticated` only).
    func uploadLine(_ connection: Connection) throws -> String {
        let roles = try connection.query("""
            select coalesce(array_to_string(array_agg(distinct case when r = 0 and \(unescaped: Self.needsSignIn) then 'authenticated'
                                                                    when r = 0 then 'public'
                                                                    when r = to_regrole('anon') and \(unescaped: Self.needsSignIn) then null
                                                                    else r::regrole::text end), ','), '')
            from pg_policy p, unnest(p.polroles) r
            where p.polrelid = to_regclass('storage.objects') and p.polcmd in ('a', '*') and p.polpermissive
              and coalesce(pg_get_expr(case when p.polcmd = 'a' then p.polwithcheck else coalesce(p.polwithcheck, p.polqual) end, p.polrelid), '') <> 'false'
            """).scalar(String.self).split(separator: ",").map(String.init)
        if roles.isEmpty {
            return "avatar uploads: no client role can upload (no INSERT policy on storage.objects allows it; only the service role, which bypasses row level security)"
        }
        if roles.contains("public") || roles.contains("anon") {
            return "avatar uploads: anonymous clients too (opt in: sql/optional/storage-hardening)"
        }
        if roles.contains("authenticated") {
            return "avatar uploads: signed-in users only"
        }
        return "avatar uploads: only the roles \(roles.sorted().joined(separator: ", ")) (neither anon nor authenticated)"
    }

    /// The advisor's checks whose findings `verify` shows as advice.
    static let advisedChecks: Set<String> = [
        "storage_insert_allows_anon", "anon_security_definer_function_executable", "authenticated_security_definer_function_executable",
        "rls_table_truncate_granted",
    ]

    /// The quickstart's known weaknesses still present in this database: the advisor's findings of `advisedChecks` in
    /// `public` (and on storage.objects), and two of the quickstart's schema that are not security checks (usernames
    /// unique only case-sensitively, a profile that blocks deleting its user).
    public func advisories(_ connection: Connection) throws -> [String] {
        let findings = try SecurityAdvisor(schemas: ["public"], only: Self.advisedChecks).run(connection).findings
        func found(_ name: String) -> [AdvisorFinding] {
            findings.filter { $0.name == name && $0.ignoredBecause == nil }.sorted { $0.object < $1.object }
        }
        let row = try connection.query("""
            select
              to_regclass('public.profiles') is not null
                and exists (select 1 from pg_attribute where attrelid = to_regclass('public.profiles') and attname = 'username' and not attisdropped)
                and not exists (
                select 1 from pg_index i where i.indrelid = to_regclass('public.profiles') and i.indisunique
                  and pg_get_indexdef(i.indexrelid) ~* 'lower\\(|casefold|normalize') as case_sensitive,
              exists (select 1 from pg_constraint c where c.conrelid = to_regclass('public.profiles') and c.contype = 'f'
                      and c.confrelid = to_regclass('auth.users') and c.confdeltype not in ('c', 'n')) as no_cascade
            """).firstRow()
        var advisories: [String] = []
        if !found("storage_insert_allows_anon").isEmpty {
            advisories.append("storage.objects: an INSERT policy applies to every role, so anonymous (anon) clients may upload to the bucket")
        }
        if try row.decode(Bool.self, "case_sensitive") {
            advisories.append("public.profiles: usernames are unique only case-sensitively (Bob and bob are two users)")
        }
        if try row.decode(Bool.self, "no_cascade") {
            advisories.append("public.profiles: the foreign key to auth.users has no ON DELETE CASCADE, so deleting a user who has a profile fails")
        }
        // anon/authenticated_security_definer_function_executable, one line a function naming both roles.
        let executable = found("anon_security_definer_function_executable") + found("authenticated_security_definer_function_executable")
        var functions: [String] = []
        for finding in executable where !functions.contains(finding.object) { functions.append(finding.object) }
        for function in functions.sorted() {
            let these = executable.filter { $0.object == function }
            let roles = these.map { $0.name.hasPrefix("anon_") ? "anon" : "authenticated" }.joined(separator: ", ")
            // The advisor reports a trigger function at info level: nobody can call it, though it holds EXECUTE.
            let reach = these.allSatisfy { $0.level == .info }
                ? "a trigger function: a direct call fails, so nobody runs it through /rest/v1/rpc; the Security Advisor lists it all the same"
                : "callable through /rest/v1/rpc with its owner's rights"
            let fix = these.first?.migration.map { "opt in: \($0) revokes EXECUTE from PUBLIC, anon and authenticated" }
                ?? "unless the app calls it through /rest/v1/rpc: revoke execute on function \(function) from public, anon, authenticated"
            advisories.append("\(function): SECURITY DEFINER and executable by \(roles) (\(reach)); \(fix)")
        }
        // rls_table_truncate_granted: row level security does not cover TRUNCATE.
        for finding in found("rls_table_truncate_granted") {
            let granted = "TRUNCATE granted to "
            let roles = finding.detail.hasPrefix(granted) ? String(finding.detail.dropFirst(granted.count)) : finding.detail
            let fix = finding.migration.map { "opt in: \($0)" } ?? "revoke truncate on \(finding.object) from anon, authenticated"
            advisories.append("\(finding.object): \(roles) may TRUNCATE it (row level security does not cover TRUNCATE); \(fix)")
        }
        return advisories
    }
}

/// Every check the advisor runs, each one catalog query (rows: schema, object, detail); the one list `steward advise`,
/// the job `security-advisor` and `verify`'s advice all draw from.
public enum AdvisorCatalog {
    /// Tables and partitioned tables of the exposed schemas.
    static let exposedTables = """
        select c.oid, n.nspname, c.relname, c.relrowsecurity from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p') and n.nspname = any($1::text[])
        """
    /// Policies with their table, roles (names; `public` for none) and expressions as text.
    static let policies = """
        select n.nspname, c.relname, p.polname, p.polcmd, p.polpermissive, c.relrowsecurity,
               coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '') as expr,
               case when p.polroles = '{0}' then array['public'] else array(select rolname::text from pg_roles where oid = any(p.polroles)) end as roles
        from pg_policy p join pg_class c on c.oid = p.polrelid join pg_namespace n on n.oid = c.relnamespace
        """

    /// A policy check (SQL over `p`, a `pg_policy` row) that a request without a signed-in user cannot pass: it
    /// compares `auth.uid()` and never asks whether it is null (for anon, `auth.uid()` is null and the comparison fails).
    public static let policyNeedsSignIn = """
        (coalesce(pg_get_expr(case when p.polcmd = 'a' then p.polwithcheck else coalesce(p.polwithcheck, p.polqual) end, p.polrelid), '') ~ 'auth\\.uid\\(\\)'
         and coalesce(pg_get_expr(case when p.polcmd = 'a' then p.polwithcheck else coalesce(p.polwithcheck, p.polqual) end, p.polrelid), '') !~* '(is null|coalesce|is not distinct)')
        """

    /// The older tutorial's hand-made table, as findings name it.
    static let legacyUserTable = "public.User"
    /// The quickstart's sign-up trigger function, as findings name it.
    static let handleNewUser = "public.handle_new_user()"

    /// Every check, in the order they run.
    public static let checks: [AdvisorCheck] = accessChecks + objectChecks

    /// Row level security, policies, functions and storage: who may reach what through the Data API.
    static let accessChecks: [AdvisorCheck] = [
        AdvisorCheck("rls_disabled_in_public", .error,
                     why: "Row level security is off, so anyone holding the anon key (shipped in every copy of the app) can read and change every row through the Data API.",
                     fix: "alter table … enable row level security, then add policies for what the app needs.",
                     fixedBy: [legacyUserTable: "sql/optional/legacy-user-table"],
                     sql: "select nspname, relname, 'row level security is disabled' from (\(exposedTables)) t where not relrowsecurity"),
        AdvisorCheck("policy_exists_rls_disabled", .error,
                     why: "Policies were written but row level security is off, so none of them applies and the table is open.",
                     fix: "alter table … enable row level security.",
                     sql: "select nspname, relname, 'policies: ' || string_agg(polname, ', ' order by polname) from (\(policies)) p where not relrowsecurity and nspname = any($1::text[]) group by nspname, relname"),
        AdvisorCheck("rls_enabled_no_policy", .info,
                     why: "Row level security is on but no policy exists, so the Data API returns nothing: the app's reads fail silently.",
                     fix: "Add the policies the app needs, or revoke the table from anon and authenticated if it is internal.",
                     sql: "select nspname, relname, 'no policy' from (\(exposedTables)) t where relrowsecurity and not exists (select 1 from pg_policy p where p.polrelid = t.oid)"),
        AdvisorCheck("function_search_path_mutable", .warn,
                     why: "The function resolves names through the caller's search_path, so a caller can make it run objects of their own.",
                     fix: "alter function … set search_path = '' (and schema-qualify the names in its body).",
                     sql: """
                        select n.nspname, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', 'no search_path set'
                        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                        where n.nspname = any($1::text[]) and p.prokind in ('f', 'p')
                          and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) s where s like 'search_path=%')
                          and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
                        """),
        AdvisorCheck("auth_rls_initplan", .warn,
                     why: "The policy calls auth.uid()/auth.jwt() once per row instead of once per query, which makes every read of a large table slow.",
                     fix: "Wrap the call in a subquery: (select auth.uid()).",
                     sql: """
                        select nspname, relname || '.' || polname, 'calls auth functions per row' from (\(policies)) p
                        where nspname = any($1::text[]) and expr ~ 'auth\\.(uid|jwt|role|email)\\(\\)'
                          and regexp_replace(expr, 'SELECT auth\\.(uid|jwt|role|email)\\(\\)', '', 'g') ~ 'auth\\.(uid|jwt|role|email)\\(\\)'
                        """),
        AdvisorCheck("rls_references_user_metadata", .error,
                     why: "user_metadata is writable by the user themselves, so a policy that trusts it lets anyone grant themselves access.",
                     fix: "Decide access from app_metadata or from a table only the server writes.",
                     sql: "select nspname, relname || '.' || polname, 'reads user_metadata' from (\(policies)) p where expr ~ 'user_metadata'"),
        AdvisorCheck("auth_users_exposed", .error,
                     why: "A view in an exposed schema reads auth.users, so every user's email and metadata can be read through the Data API.",
                     fix: "Drop the view, or revoke it from anon and authenticated and make it security_invoker.",
                     sql: """
                        select distinct n.nspname, v.relname, 'reads auth.users'
                        from pg_class v join pg_namespace n on n.oid = v.relnamespace
                        join pg_rewrite r on r.ev_class = v.oid join pg_depend d on d.objid = r.oid and d.classid = 'pg_rewrite'::regclass
                        where v.relkind in ('v', 'm') and n.nspname = any($1::text[]) and d.refobjid = to_regclass('auth.users')
                          and (has_table_privilege('anon', v.oid, 'select') or has_table_privilege('authenticated', v.oid, 'select'))
                        """),
        AdvisorCheck("security_definer_view", .error,
                     why: "The view runs with its owner's rights, so it bypasses the row level security of the tables it reads.",
                     fix: "alter view … set (security_invoker = on).",
                     sql: """
                        select n.nspname, v.relname, 'runs with the owner''s rights'
                        from pg_class v join pg_namespace n on n.oid = v.relnamespace
                        where v.relkind = 'v' and n.nspname = any($1::text[])
                          and (has_table_privilege('anon', v.oid, 'select') or has_table_privilege('authenticated', v.oid, 'select'))
                          and not coalesce(lower(v.reloptions::text)::text[] && array['security_invoker=true', 'security_invoker=on', 'security_invoker=1', 'security_invoker=yes'], false)
                          and not exists (select 1 from pg_depend d where d.objid = v.oid and d.deptype = 'e')
                        """),
        AdvisorCheck("public_bucket_allows_listing", .warn,
                     why: "A public bucket serves files by URL without any policy; a SELECT policy on top lets anyone list every file name in it.",
                     fix: "Drop the broad SELECT policy on storage.objects for this bucket; public URLs keep working.",
                     sql: """
                        select 'storage', b.id, 'listable through ' || string_agg(p.polname, ', ' order by p.polname)
                        from storage.buckets b join (\(policies)) p on p.nspname = 'storage' and p.relname = 'objects' and p.polcmd in ('r', '*')
                        where b.public and (p.roles && array['public', 'anon'])
                          and (p.expr ~ ('''' || b.id || '''') or p.expr !~ 'bucket_id')
                        group by b.id
                        """),
        securityDefinerExecutable(by: "anon",
                                  why: "Anyone with the anon key can call this SECURITY DEFINER function over the Data API and it runs with its owner's rights.",
                                  fix: "revoke execute on function … from anon, public (or make it SECURITY INVOKER)."),
        securityDefinerExecutable(by: "authenticated",
                                  why: "Any signed-in user can call this SECURITY DEFINER function over the Data API and it runs with its owner's rights.",
                                  fix: "revoke execute on function … from authenticated, public unless users must call it."),
        AdvisorCheck("multiple_permissive_policies", .warn,
                     why: "Several permissive policies for one role and action are OR-ed together and each is evaluated for every row: slower, and one loose policy opens the table.",
                     fix: "Merge them into one policy per role and action.",
                     // One row per policy, role and action, each from its own join: a FOR ALL policy counts for all four
                     // actions and `public` for every role it reaches (as the Security Advisor counts them: roles that
                     // neither bypass row level security nor are PostgreSQL's or Supabase's administrators).
                     sql: """
                        select nspname, relname, string_agg('role ' || role || ', ' || action || ': ' || names, '; ' order by role, action)
                        from (select n.nspname, c.relname, r.rolname::text as role, a.action, string_agg(p.polname, ', ' order by p.polname) as names
                              from pg_policy p join pg_class c on c.oid = p.polrelid join pg_namespace n on n.oid = c.relnamespace
                              join pg_roles r on p.polroles = '{0}' or r.oid = any(p.polroles)
                              cross join lateral unnest(case p.polcmd when '*' then array['select', 'insert', 'update', 'delete']
                                   when 'r' then array['select'] when 'a' then array['insert'] when 'w' then array['update'] else array['delete'] end) a(action)
                              where p.polpermissive and c.relkind in ('r', 'p') and n.nspname = any($1::text[])
                                and left(r.rolname, 3) <> 'pg_' and r.rolname not like 'supabase%admin' and not r.rolbypassrls
                              group by n.nspname, c.relname, r.rolname, a.action having count(*) > 1) x
                        group by nspname, relname
                        """),
        AdvisorCheck("unindexed_foreign_keys", .info,
                     why: "A foreign key without an index makes deletes and updates of the referenced row scan this whole table.",
                     fix: "create index on … (the foreign key's columns).",
                     sql: """
                        select n.nspname, c.relname || '.' || k.conname, 'no index starts with the foreign key''s columns'
                        from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
                        where k.contype = 'f' and n.nspname = any($1::text[])
                          and not exists (select 1 from pg_index i where i.indrelid = k.conrelid
                                          and (i.indkey::int2[])[0:cardinality(k.conkey) - 1] @> k.conkey
                                          and (i.indkey::int2[])[0:cardinality(k.conkey) - 1] <@ k.conkey)
                        """),
        AdvisorCheck("duplicate_index", .warn,
                     why: "Identical indexes cost every write twice and give nothing more.",
                     fix: "Drop all but one of them.",
                     sql: """
                        select n.nspname, c.relname, 'identical indexes: ' || string_agg(x.relname, ', ' order by x.relname)
                        from pg_index i join pg_class x on x.oid = i.indexrelid join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
                        where n.nspname = any($1::text[])
                        group by n.nspname, c.relname, i.indrelid, i.indkey::text, i.indclass::text, coalesce(pg_get_expr(i.indexprs, i.indrelid), ''), coalesce(pg_get_expr(i.indpred, i.indrelid), '')
                        having count(*) > 1
                        """),
        AdvisorCheck("rls_table_truncate_granted", .warn,
                     why: "Row level security does not cover TRUNCATE, so anon or authenticated can empty this table despite its policies.",
                     fix: "revoke truncate on … from anon, authenticated.",
                     fixedBy: ["public.profiles": "sql/optional/api-hardening"],
                     sql: """
                        select nspname, relname, 'TRUNCATE granted to ' || concat_ws(', ', case when has_table_privilege('anon', oid, 'truncate') then 'anon' end,
                               case when has_table_privilege('authenticated', oid, 'truncate') then 'authenticated' end)
                        from (\(exposedTables)) t
                        where relrowsecurity and (has_table_privilege('anon', oid, 'truncate') or has_table_privilege('authenticated', oid, 'truncate'))
                        """),
        AdvisorCheck("anon_readable_emails", .error,
                     why: "Anyone with the anon key can read this table, and its rows hold email addresses: a list of the app's users for the taking.",
                     fix: "Enable row level security with owner-only policies and revoke the table from anon.",
                     fixedBy: [legacyUserTable: "sql/optional/legacy-user-table"],
                     sql: """
                        select t.nspname, t.relname, 'column ' || a.attname || ' holds email addresses'
                        from (\(exposedTables)) t join pg_attribute a on a.attrelid = t.oid and a.attnum > 0 and not a.attisdropped
                        where a.atttypid in ('text'::regtype, 'varchar'::regtype)
                          and has_column_privilege('anon', t.oid, a.attnum, 'select')
                          and (not t.relrowsecurity or exists (select 1 from pg_policy p where p.polrelid = t.oid and p.polcmd in ('r', '*') and p.polpermissive
                                                               and (p.polroles = '{0}' or 'anon'::regrole = any(p.polroles))
                                                               and coalesce(pg_get_expr(p.polqual, p.polrelid), 'true') = 'true'))
                          and (query_to_xml(format('select 1 as hit from (select %I::text as v from %I.%I limit 200) s where v ~ %L limit 1',
                                                   a.attname, t.nspname, t.relname, '^[^@[:space:]]+@[^@[:space:]]+\\.[^@[:space:]]+$'), false, false, '')::text ~ '<hit>')
                        """),
        AdvisorCheck("storage_insert_allows_anon", .warn,
                     why: "An INSERT policy on storage.objects admits anon, so anyone with the app's public key can upload files to this project.",
                     fix: "Limit the INSERT policy to authenticated and to the user's own folder.",
                     fixedBy: ["storage.objects.Anyone can upload an avatar.": "sql/optional/storage-hardening"],
                     sql: """
                        select 'storage', 'objects.' || p.polname, 'INSERT for ' || case when p.polroles = '{0}' then 'public'
                               else array_to_string(array(select rolname::text from pg_roles where oid = any(p.polroles) order by 1), ', ') end
                        from pg_policy p
                        where p.polrelid = to_regclass('storage.objects') and p.polcmd in ('a', '*') and p.polpermissive
                          and (p.polroles = '{0}' or to_regrole('anon') = any(p.polroles)) and not \(policyNeedsSignIn)
                        """),
        AdvisorCheck("policy_casts_text_column_to_uuid", .warn,
                     why: "The policy casts a text column to uuid to compare it with auth.uid(): one row holding anything else makes every query on the table fail, and no index on the column is used.",
                     fix: "Compare the text column with (select auth.uid())::text instead.",
                     sql: """
                        select nspname, relname || '.' || polname, 'casts a column to uuid next to auth.uid()' from (\(policies)) p
                        where nspname = any($1::text[]) and expr ~ 'auth\\.uid\\(\\)' and expr ~ '"?[A-Za-z_][A-Za-z0-9_]*"?\\)?::uuid'
                        """),
        AdvisorCheck("security_definer_search_path_mutable", .error,
                     why: "A SECURITY DEFINER function without a fixed search_path can be made to run a caller's objects with its owner's rights.",
                     fix: "alter function … set search_path = ''.",
                     sql: """
                        select n.nspname, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', 'SECURITY DEFINER without search_path'
                        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                        where p.prosecdef and n.nspname not in ('pg_catalog', 'information_schema')
                          and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) s where s like 'search_path=%')
                          and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
                        """),
    ]

    /// `<role>_security_definer_function_executable`: SECURITY DEFINER functions `role` may call.
    ///
    /// Trigger functions are reported too, as the Security Advisor reports them (so the dashboard's list and this one
    /// match name for name), but at info level: a trigger function cannot be called directly (PostgreSQL refuses a
    /// call outside a trigger), so holding EXECUTE lets nobody run it; revoking EXECUTE only makes the lists agree.
    static func securityDefinerExecutable(by role: String, why: String, fix: String) -> AdvisorCheck {
        AdvisorCheck("\(role)_security_definer_function_executable", .warn, why: why, fix: fix,
                     fixedBy: [handleNewUser: "sql/optional/api-hardening"], sql: """
            select n.nspname, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
                   case when p.prorettype in ('trigger'::regtype, 'event_trigger'::regtype)
                        then '\(role) may execute it, but it is a trigger function: calling it directly fails (a trigger function runs only from '
                             || 'its trigger), so it is not callable through /rest/v1/rpc; listed as the Security Advisor lists it. Revoking EXECUTE '
                             || 'makes the lists agree and its trigger keeps working (public.handle_new_user(): opt in to sql/optional/api-hardening)'
                        else '\(role) may execute it' end,
                   case when p.prorettype in ('trigger'::regtype, 'event_trigger'::regtype) then 'INFO' end
            from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where p.prosecdef and n.nspname = any($1::text[]) and has_function_privilege('\(role)', p.oid, 'execute')
            """)
    }
}

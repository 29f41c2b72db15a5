/// The Security Advisor's lints on an app's tables, views, extensions and indexes that the checks of
/// `AdvisorCatalog.swift` do not cover, each under the lint's name and level and written from what the lint detects.
/// The exposed schemas (`$1`) stand in for PostgREST's `db_schemas`.
extension AdvisorCatalog {
    /// Relations no extension owns (an extension's objects are the extension's business, not the app's).
    static let notFromExtension = "not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')"

    /// `true`, `(true)`, `1=1`, `(1=1)` in any case and spacing: an expression that admits every row.
    static func alwaysTrue(_ expression: String) -> String {
        "lower(regexp_replace(coalesce(\(expression), ''), '\\s', '', 'g')) in ('true', '(true)', '1=1', '(1=1)')"
    }

    /// Relations of `relkind` in the exposed schemas that anon or authenticated may select, which row level security
    /// cannot cover (materialized views, foreign tables).
    static func readableWithoutRowSecurity(_ name: String, relkind: String, why: String) -> AdvisorCheck {
        AdvisorCheck(name, .warn, why: why,
                     fix: "revoke select on … from anon, authenticated (or move it to a schema the API does not expose).",
                     sql: """
                        select n.nspname, c.relname, 'selectable by ' || concat_ws(', ', case when has_table_privilege('anon', c.oid, 'select') then 'anon' end,
                               case when has_table_privilege('authenticated', c.oid, 'select') then 'authenticated' end)
                        from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where c.relkind = '\(relkind)' and n.nspname = any($1::text[]) and \(notFromExtension)
                          and (has_table_privilege('anon', c.oid, 'select') or has_table_privilege('authenticated', c.oid, 'select'))
                        """)
    }

    static let objectChecks: [AdvisorCheck] = [
        AdvisorCheck("rls_policy_always_true", .warn,
                     why: "The policy lets anon or authenticated change or add any row: row level security is on, but this policy admits everything it applies to.",
                     fix: "Give the policy a real condition, such as (select auth.uid()) = owner.",
                     // SELECT policies are left out: `using (true)` for reads is the usual way to publish a table.
                     sql: """
                        select n.nspname, c.relname || '.' || p.polname,
                               'FOR ' || case p.polcmd when 'a' then 'INSERT' when 'w' then 'UPDATE' when 'd' then 'DELETE' else 'ALL' end
                               || case when u.open and w.open then ': USING and WITH CHECK are always true' when u.open then ': USING is always true' else ': WITH CHECK is always true' end
                        from pg_policy p join pg_class c on c.oid = p.polrelid join pg_namespace n on n.oid = c.relnamespace
                        cross join lateral (select p.polcmd in ('w', 'd', '*') and (p.polqual is null or \(alwaysTrue("pg_get_expr(p.polqual, p.polrelid)"))) as open) u
                        cross join lateral (select \(alwaysTrue("pg_get_expr(p.polwithcheck, p.polrelid)"))
                                                   or (p.polwithcheck is null and p.polcmd = 'a')
                                                   or (p.polwithcheck is null and p.polcmd in ('w', '*') and \(alwaysTrue("pg_get_expr(p.polqual, p.polrelid)"))) as open) w
                        where c.relkind = 'r' and c.relrowsecurity and p.polpermissive and n.nspname = any($1::text[])
                          and (p.polroles = '{0}' or to_regrole('anon') = any(p.polroles) or to_regrole('authenticated') = any(p.polroles))
                          and (u.open or w.open)
                        """),
        AdvisorCheck("no_primary_key", .info,
                     why: "Without a primary key the Data API cannot address one row for update or delete, and replication and tools that diff rows cannot either.",
                     fix: "alter table … add primary key (…).",
                     sql: """
                        select n.nspname, c.relname, 'no primary key'
                        from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where c.relkind = 'r' and n.nspname = any($1::text[]) and \(notFromExtension)
                          and not exists (select 1 from pg_index i where i.indrelid = c.oid and i.indisprimary)
                        """),
        readableWithoutRowSecurity("materialized_view_in_api", relkind: "m",
                     why: "A materialized view has no row level security: anon or authenticated can read all of it through the Data API."),
        readableWithoutRowSecurity("foreign_table_in_api", relkind: "f",
                     why: "A foreign table has no row level security: anon or authenticated can read the remote data through the Data API."),
        AdvisorCheck("extension_in_public", .warn,
                     why: "The extension's functions and types sit in public, which the Data API exposes and every role searches: they can be called over /rest/v1/rpc and shadow names.",
                     fix: "alter extension … set schema extensions (or drop and create it there).",
                     sql: """
                        select 'public', e.extname, 'installed in public (version ' || e.extversion || ')'
                        from pg_extension e where e.extnamespace = 'public'::regnamespace and e.extname <> 'plpgsql'
                        """),
        AdvisorCheck("extension_versions_outdated", .warn,
                     why: "The extension runs an older version than the one the server ships; fixes, security ones included, arrive with the update.",
                     fix: "alter extension … update.",
                     sql: """
                        select n.nspname, a.name, 'version ' || a.installed_version || ', ' || a.default_version || ' available'
                        from pg_available_extensions a join pg_extension e on e.extname = a.name join pg_namespace n on n.oid = e.extnamespace
                        where a.default_version is not null and a.installed_version <> a.default_version
                        """),
        AdvisorCheck("insecure_queue_exposed_in_api", .error,
                     why: "pgmq_public is exposed, and this queue table has row level security off: anyone with the anon key can read and send its messages.",
                     fix: "alter table pgmq.… enable row level security, with policies for who may use the queue.",
                     sql: """
                        select n.nspname, c.relname, 'queue table without row level security'
                        from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where 'pgmq_public' = any($1::text[]) and n.nspname = 'pgmq' and c.relname like 'q\\_%' and c.relkind in ('r', 'p') and not c.relrowsecurity
                          and (has_table_privilege('anon', c.oid, 'select') or has_table_privilege('authenticated', c.oid, 'select'))
                        """),
        graphQLExposed(to: "anon", relkinds: "'r', 'p', 'v', 'm'",
                       why: "pg_graphql is installed and anon may read this object, so its name, columns and relationships show in /graphql/v1 introspection to anyone with the anon key, row level security or not."),
        graphQLExposed(to: "authenticated", relkinds: "'r', 'v', 'm', 'f'",
                       why: "pg_graphql is installed and authenticated may read this object, so its name, columns and relationships show in /graphql/v1 introspection to every signed-in user, row level security or not."),
        AdvisorCheck("fkey_to_auth_unique", .error,
                     why: "The foreign key depends on a unique constraint of the auth schema, which Supabase may change or drop in an upgrade; it can block the upgrade or break the table.",
                     fix: "Reference auth.users (id) instead, or drop the foreign key.",
                     sql: """
                        select n.nspname, c.relname || '.' || k.conname, 'references ' || r.relname || ' through unique index ' || x.relname
                        from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
                        join pg_class r on r.oid = k.confrelid join pg_index i on i.indexrelid = k.conindid join pg_class x on x.oid = i.indexrelid
                        where k.contype = 'f' and r.relnamespace = to_regnamespace('auth') and i.indisunique and not i.indisprimary
                          and n.nspname not in ('auth', 'pg_catalog', 'information_schema')
                        """),
        AdvisorCheck("sensitive_columns_exposed", .error,
                     why: "The table is readable through the Data API without row level security and has columns whose names say they hold secrets or personal data.",
                     fix: "alter table … enable row level security, with policies; or revoke the table from anon and authenticated.",
                     sql: """
                        select n.nspname, c.relname, 'sensitive columns: ' || string_agg(a.attname, ', ' order by a.attname)
                        from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                        where c.relkind = 'r' and not c.relrowsecurity and n.nspname = any($1::text[])
                          and (has_table_privilege('anon', c.oid, 'select') or has_table_privilege('authenticated', c.oid, 'select'))
                          and replace(lower(a.attname), '-', '_') = any(array[\(sensitiveColumnNames.map { "'\($0)'" }.joined(separator: ", "))])
                        group by n.nspname, c.relname
                        """),
        AdvisorCheck("unsupported_reg_types", .warn,
                     why: "The column stores a reg* type holding object ids that pg_upgrade cannot carry over, so the project cannot be upgraded to a new PostgreSQL version.",
                     fix: "Store the name as text instead (alter column … type text using …::text).",
                     sql: """
                        select n.nspname, c.relname || '.' || a.attname, 'column of type ' || format_type(a.atttypid, a.atttypmod)
                        from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
                        where a.attnum > 0 and not a.attisdropped and c.relkind in ('r', 'p', 'm')
                          and a.atttypid in ('regcollation'::regtype, 'regconfig'::regtype, 'regdictionary'::regtype, 'regnamespace'::regtype,
                                             'regoper'::regtype, 'regoperator'::regtype, 'regproc'::regtype, 'regprocedure'::regtype)
                          and n.nspname not in ('pg_catalog', 'information_schema')
                        """),
        AdvisorCheck("unused_index", .info,
                     why: "The index has not been scanned since statistics were last reset, yet every write to the table updates it.",
                     fix: "Drop it if no query needs it (statistics restart with the server's stats reset: judge over a full business cycle).",
                     sql: """
                        select n.nspname, x.relname, 'on ' || c.relname || ': never scanned'
                        from pg_stat_user_indexes s join pg_index i on i.indexrelid = s.indexrelid
                        join pg_class x on x.oid = i.indexrelid join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
                        where s.idx_scan = 0 and not i.indisunique and not i.indisprimary and n.nspname = any($1::text[]) and \(notFromExtension)
                        """),
        AdvisorCheck("table_bloat", .info,
                     why: "Most of the table's pages hold dead space: scans read far more than the live rows need.",
                     fix: "Reclaim it with vacuum full or pg_repack (vacuum full locks the table), and make autovacuum run on it more often.",
                     // The live rows' size is estimated from pg_stats (rows, their average width and nulls), so it
                     // needs ANALYZE to have run; more than 70 pages for each page the rows need and over 20 MB of
                     // waste, as the Security Advisor counts it.
                     sql: """
                        select nspname, relname, round(relpages / needed, 1) || ' times the pages its rows need, ' || pg_size_pretty(waste) || ' wasted'
                        from (select n.nspname, c.relname, c.relpages::numeric as relpages,
                                     greatest(ceil(c.reltuples::numeric * (24 + 4 * ceil(w.width / 4) + 4 + w.nulls) / (current_setting('block_size')::numeric - 20)), 1) as needed,
                                     ((c.relpages - ceil(c.reltuples::numeric * (24 + 4 * ceil(w.width / 4) + 4 + w.nulls) / (current_setting('block_size')::numeric - 20)))
                                      * current_setting('block_size')::bigint)::bigint as waste
                              from pg_class c join pg_namespace n on n.oid = c.relnamespace
                              cross join lateral (select sum((1 - s.null_frac) * s.avg_width)::numeric as width,
                                                         max(s.null_frac)::numeric * (4 * ceil((1 + count(*) filter (where s.null_frac > 0) / 8.0) / 4)) as nulls
                                                  from pg_stats s where s.schemaname = n.nspname and s.tablename = c.relname) w
                              where c.relkind = 'r' and c.relam = (select oid from pg_am where amname = 'heap') and n.nspname = any($1::text[])
                                and w.width is not null and c.reltuples > 0) t
                        where relpages / needed > 70 and waste > 20 * 1024 * 1024
                        """),
    ]

    /// Column names (lowercase, `-` read as `_`) that say a column holds credentials or personal data, as the
    /// Security Advisor lists them.
    static let sensitiveColumnNames = [
        "password", "passwd", "pwd", "passphrase", "secret", "secret_key", "private_key", "api_key", "apikey", "auth_key", "token", "jwt",
        "access_token", "refresh_token", "oauth_token", "session_token", "bearer_token", "auth_code", "session_id", "session_key",
        "session_secret", "recovery_code", "backup_code", "verification_code", "otp", "two_factor", "2fa_secret", "2fa_code",
        "ssn", "social_security", "social_security_number", "driver_license", "drivers_license", "license_number", "passport_number",
        "passport_id", "national_id", "tax_id", "credit_card", "card_number", "cvv", "cvc", "cvn", "bank_account", "account_number",
        "routing_number", "iban", "swift_code", "bic", "health_record", "medical_record", "patient_id", "insurance_number",
        "health_insurance", "medical_insurance", "treatment", "mac_address", "macaddr", "imei", "device_uuid", "pgp_key", "gpg_key",
        "ssh_key", "certificate", "license_key", "activation_key", "facial_recognition",
    ]

    /// `pg_graphql_<role>_table_exposed`: objects of the exposed schemas `role` may read while pg_graphql is installed.
    static func graphQLExposed(to role: String, relkinds: String, why: String) -> AdvisorCheck {
        AdvisorCheck("pg_graphql_\(role)_table_exposed", .warn, why: why,
                     fix: "revoke select on … from \(role) if it need not be discoverable, or drop pg_graphql if the app does not use GraphQL.",
                     // Any readable column counts: a column grant is enough for introspection to show the object.
                     sql: """
                        select n.nspname, c.relname, case c.relkind when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end
                               || ' visible in /graphql/v1 introspection to \(role)'
                        from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where exists (select 1 from pg_extension where extname = 'pg_graphql') and c.relkind in (\(relkinds)) and n.nspname = any($1::text[])
                          and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
                                      and has_column_privilege('\(role)', c.oid, a.attnum, 'select'))
                        """)
    }
}

import Postgres

/// A digest of a database's own catalog rows outside Steward's schema (relations with their rights and options,
/// columns, functions with bodies and rights, policies, triggers, constraints, indexes, types, sequences' positions
/// and bucket rows), read straight from the `pg_*` tables: for tests that a command changed nothing. Written apart
/// from Steward's `CatalogSnapshot` on purpose, so a blind spot there is not one here.
public enum CatalogDigest {
    public static func of(_ connection: Connection) throws -> String {
        try connection.query("""
            with own as (select c.oid from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname in ('steward', 'pg_toast'))
            select md5(string_agg(x, E'\\n' order by x)) from (
              select 'c ' || c.oid || c.relname || c.relkind::text || coalesce(c.relacl::text, '') || coalesce(c.reloptions::text, '')
                     || c.relrowsecurity || c.relforcerowsecurity || c.relreplident::text as x
              from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname not in ('steward', 'pg_toast')
              union all select 'a ' || attrelid || attname || atttypid || attnotnull || coalesce(attacl::text, '') from pg_attribute
                where attnum > 0 and attrelid not in (select oid from own)
              union all select 'p ' || oid || proname || prosrc || provolatile::text || prosecdef || coalesce(proacl::text, '') || coalesce(proconfig::text, '')
                from pg_proc where pronamespace::regnamespace::text <> 'steward'
              union all select 'y ' || oid || polname || coalesce(pg_get_expr(polqual, polrelid), '') || coalesce(pg_get_expr(polwithcheck, polrelid), '') from pg_policy
              union all select 't ' || oid || tgname || tgenabled::text from pg_trigger where tgrelid not in (select oid from own)
              union all select 'k ' || oid || conname || pg_get_constraintdef(oid) from pg_constraint where connamespace::regnamespace::text <> 'steward'
              union all select 'i ' || indexrelid || indisvalid from pg_index where indrelid not in (select oid from own)
              union all select 'e ' || oid || typname from pg_type where typnamespace::regnamespace::text <> 'steward'
              union all select 'n ' || oid || nspname || coalesce(nspacl::text, '') from pg_namespace where nspname <> 'steward'
              union all select 'd ' || oid::text || coalesce(defaclacl::text, '') from pg_default_acl
              union all select 's ' || c.oid || coalesce(pg_sequence_last_value(c.oid::regclass)::text, '-')
              from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.relkind = 'S' and n.nspname <> 'steward'
              union all select 'b ' || to_jsonb(b)::text from storage.buckets b
            ) rows
            """).scalar(String.self)
    }
}

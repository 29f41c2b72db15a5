-- The CTE `ns` (a fragment the queries that need it put in place): the schemas an app's objects can be in, not PostgreSQL's,
-- Steward's, the Supabase CLI's history, temporary schemas or an extension's own. Shared by the snapshot and the
-- shadow database's copy.
ns as (
  select n.oid, n.nspname, n.nspowner, n.nspacl from pg_namespace n
  where n.nspname not in ('pg_catalog', 'information_schema', 'steward', 'supabase_migrations')
    and n.nspname !~ '^pg_(toast|temp_|toast_temp_)'
    and not exists (select 1 from pg_depend d where d.classid = 'pg_namespace'::regclass and d.objid = n.oid and d.deptype = 'e')
)

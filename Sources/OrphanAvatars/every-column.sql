-- Every column that can hold an object's name or URL, by construction: each column of a string type (or a domain over
-- one), json, jsonb, or an array of those, of every table and materialised view outside PostgreSQL's own schemas and
-- Steward's, `auth` included (`auth.users.raw_user_meta_data` holds the avatar an app set with `updateUser`). Left
-- out: Storage's own schema (`storage.objects` names every object, `storage.buckets` and the rest describe objects and
-- buckets, none refers to one), views (their values come from tables read here) and foreign tables (another server's
-- rows). Per column: schema, table, column, whether this role
-- can read it whole (USAGE on the schema, SELECT on the column, and no row level security that would hide rows from
-- it), whether the relation is a materialised view, in the catalog's order.
select n.nspname::text, c.relname::text, a.attname::text,
       has_schema_privilege(n.oid, 'USAGE') and has_column_privilege(c.oid, a.attnum, 'SELECT')
         and (not c.relrowsecurity
              or (select r.rolbypassrls from pg_roles r where r.rolname = current_user)
              or (pg_has_role(c.relowner, 'USAGE') and not c.relforcerowsecurity)) as readable,
       c.relkind::text = 'm' as materialised
from pg_attribute a
join pg_class c on c.oid = a.attrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_type t on t.oid = a.atttypid
left join pg_type e on e.oid = t.typelem and t.typcategory = 'A'
where c.relkind in ('r', 'm') and a.attnum > 0 and not a.attisdropped
  and n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'steward', 'storage')
  and n.nspname !~ '^pg_(toast_)?temp_'
  and (coalesce(e.typcategory, t.typcategory)::text = 'S' or coalesce(e.typname, t.typname)::text in ('json', 'jsonb'))
order by n.nspname, c.relname, a.attnum

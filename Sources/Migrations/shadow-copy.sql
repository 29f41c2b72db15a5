-- Rows (kind, name, statement) that rebuild the platform's objects in a shadow database, in an order that lets each
-- stand on the ones before it; $1 lists the schemas the files create (with `public`), whose objects are not copied.
-- The CTE ns comes from catalog-namespaces.sql.
with {{ns}}, copied as (
  -- The schemas the files do not create, and those that hold an extension whatever the files say (a file's
  -- `create schema if not exists extensions` stands on the platform's schema).
  select * from ns where nspname <> all($1::text[]) or exists (select 1 from pg_extension e where e.extnamespace = ns.oid)
),
rel as (
  select c.*, n.nspname, quote_ident(n.nspname) || '.' || quote_ident(c.relname) as q, n.nspname || '.' || c.relname as plain
  from pg_class c join copied n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
    and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
), fn as (
  select p.*, n.nspname, quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')' as q
  from pg_proc p join copied n on n.oid = p.pronamespace
  where p.prokind in ('f', 'p')
    and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
), acl as (
  select 'table' as objkind, rel.q, rel.plain, rel.relowner as owner, rel.relacl as acl, case when rel.relkind = 'S' then 'sequence' else 'table' end as word
  from rel where rel.relacl is not null
  union all
  select 'function', fn.q, fn.nspname || '.' || fn.proname, fn.proowner, fn.proacl, case when fn.prokind = 'p' then 'procedure' else 'function' end
  from fn where fn.proacl is not null
  union all
  select 'schema', quote_ident(n.nspname), n.nspname, n.nspowner, n.nspacl, 'schema' from ns n
  where n.nspacl is not null and (n.nspname = 'public' or n.oid in (select oid from copied))
)
select kind, name, statement from (
  select 10 as phase, 0::bigint as ord, 'schema'::text as kind, nspname::text as name, 'create schema if not exists ' || quote_ident(nspname) as statement from copied
  union all
  select 20, e.oid::bigint, 'extension', e.extname,
         'create extension if not exists ' || quote_ident(e.extname) || ' with schema ' || quote_ident(n.nspname)
  from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname <> 'plpgsql'
  union all
  select 30, t.oid::bigint, 'type', n.nspname || '.' || t.typname,
         'create type ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname) || case t.typtype
           when 'e' then ' as enum (' || coalesce((select string_agg(quote_literal(e.enumlabel), ', ' order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid), '') || ')'
           when 'r' then ' as range (subtype = ' || (select format_type(rg.rngsubtype, null) from pg_range rg where rg.rngtypid = t.oid) || ')'
           else ' as (' || (select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
                            from pg_attribute a where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped) || ')' end
  from pg_type t join copied n on n.oid = t.typnamespace
  where (t.typtype in ('e', 'r') or (t.typtype = 'c' and (select c.relkind from pg_class c where c.oid = t.typrelid) = 'c'))
    and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
  union all
  select 31, t.oid::bigint, 'type', n.nspname || '.' || t.typname,
         'create domain ' || quote_ident(n.nspname) || '.' || quote_ident(t.typname) || ' as ' || format_type(t.typbasetype, t.typtypmod)
         || coalesce(' default ' || t.typdefault, '') || case when t.typnotnull then ' not null' else '' end
         || coalesce((select ' ' || string_agg('constraint ' || quote_ident(co.conname) || ' ' || pg_get_constraintdef(co.oid), ' ' order by co.conname)
                      from pg_constraint co where co.contypid = t.oid), '')
  from pg_type t join copied n on n.oid = t.typnamespace where t.typtype = 'd'
    and not exists (select 1 from pg_depend d where d.classid = 'pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
  union all
  select 40, rel.oid::bigint, 'sequence', rel.plain,
         'create sequence ' || rel.q || ' as ' || format_type(s.seqtypid, null) || ' increment ' || s.seqincrement || ' minvalue ' || s.seqmin
         || ' maxvalue ' || s.seqmax || ' start ' || s.seqstart || ' cache ' || s.seqcache || case when s.seqcycle then ' cycle' else '' end
  from rel join pg_sequence s on s.seqrelid = rel.oid
  where not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = rel.oid and d.deptype = 'i')
  union all
  select 50, rel.oid::bigint, 'table', rel.plain,
         'create ' || case when rel.relpersistence = 'u' then 'unlogged ' else '' end || 'table ' || rel.q || ' ('
         || coalesce((select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                                        || case when a.attnotnull then ' not null' else '' end
                                        || case when a.attidentity = 'a' then ' generated always as identity'
                                                when a.attidentity = 'd' then ' generated by default as identity' else '' end,
                                        ', ' order by a.attnum)
                      from pg_attribute a where a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''), '')
         || ')' || case when rel.relkind = 'p' then ' partition by ' || pg_get_partkeydef(rel.oid) else '' end
  from rel where rel.relkind in ('r', 'p') and not rel.relispartition
  union all
  select 60, fn.oid::bigint, 'function', fn.nspname || '.' || fn.proname, pg_get_functiondef(fn.oid) from fn
  union all
  select 70, rel.oid::bigint * 10000 + a.attnum, 'table', rel.plain,
         'alter table ' || rel.q || ' alter column ' || quote_ident(a.attname) || ' set default ' || pg_get_expr(ad.adbin, ad.adrelid)
  from rel join pg_attribute a on a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
  join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum where rel.relkind in ('r', 'p')
  union all
  select 71, rel.oid::bigint * 10000 + a.attnum, 'table', rel.plain,
         'alter table ' || rel.q || ' add column ' || quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
         || ' generated always as (' || pg_get_expr(ad.adbin, ad.adrelid) || ') stored'
  from rel join pg_attribute a on a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = 's'
  join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum where rel.relkind in ('r', 'p')
  union all
  select case co.contype when 'p' then 80 when 'u' then 81 when 'f' then 83 else 82 end, co.oid::bigint, 'table', rel.plain,
         'alter table ' || rel.q || ' add constraint ' || quote_ident(co.conname) || ' ' || pg_get_constraintdef(co.oid)
  from rel join pg_constraint co on co.conrelid = rel.oid where co.contype in ('p', 'u', 'f', 'c', 'x') and co.conislocal
  union all
  select 90, ic.oid::bigint, 'index', rel.nspname || '.' || ic.relname, pg_get_indexdef(i.indexrelid)
  from rel join pg_index i on i.indrelid = rel.oid join pg_class ic on ic.oid = i.indexrelid
  where not exists (select 1 from pg_constraint co where co.conindid = i.indexrelid and co.contype in ('p', 'u', 'x'))
  union all
  select 100, rel.oid::bigint, 'view', rel.plain,
         case when rel.relkind = 'v' then 'create view ' || rel.q || coalesce(' with (' || array_to_string(rel.reloptions, ', ') || ')', '')
                                          || ' as ' || pg_get_viewdef(rel.oid, true)
              else 'create materialized view ' || rel.q || ' as ' || rtrim(pg_get_viewdef(rel.oid, true), ';') || ' with no data' end
  from rel where rel.relkind in ('v', 'm')
  union all
  select 110, rel.oid::bigint, 'table', rel.plain,
         'alter table ' || rel.q || ' enable row level security' || case when rel.relforcerowsecurity then '; alter table ' || rel.q || ' force row level security' else '' end
  from rel where rel.relrowsecurity
  union all
  select 130, tg.oid::bigint, 'trigger', tg.tgname || ' on ' || rel.plain, pg_get_triggerdef(tg.oid)
  from rel join pg_trigger tg on tg.tgrelid = rel.oid where not tg.tgisinternal
  union all
  select 140, 0, acl.word, acl.plain, 'revoke all on ' || acl.word || ' ' || acl.q || ' from public' from acl
  union all
  select 141, 0, acl.word, acl.plain,
         'grant ' || a.privilege_type || ' on ' || acl.word || ' ' || acl.q || ' to '
         || case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end
         || case when a.is_grantable then ' with grant option' else '' end
  from acl, aclexplode(acl.acl) a where a.grantee <> acl.owner
  union all
  select 150, da.oid::bigint, 'default privileges', pg_get_userbyid(da.defaclrole),
         'alter default privileges for role ' || quote_ident(pg_get_userbyid(da.defaclrole))
         || coalesce(' in schema ' || quote_ident(n.nspname), '') || ' grant ' || a.privilege_type || ' on '
         || case da.defaclobjtype when 'r' then 'tables' when 'S' then 'sequences' when 'f' then 'functions' when 'T' then 'types' else 'schemas' end
         || ' to ' || case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end
  from pg_default_acl da left join pg_namespace n on n.oid = da.defaclnamespace, aclexplode(da.defaclacl) a
  union all
  select 160, p.oid::bigint, 'publication', p.pubname,
         'create publication ' || quote_ident(p.pubname) || case when p.puballtables then ' for all tables' else '' end
         || ' with (publish = ''' || concat_ws(', ', case when p.pubinsert then 'insert' end, case when p.pubupdate then 'update' end,
                                               case when p.pubdelete then 'delete' end, case when p.pubtruncate then 'truncate' end) || ''')'
  from pg_publication p
  union all
  select 161, pr.oid::bigint, 'publication', p.pubname, 'alter publication ' || quote_ident(p.pubname) || ' add table ' || rel.q
  from pg_publication p join pg_publication_rel pr on pr.prpubid = p.oid join rel on rel.oid = pr.prrelid
) steps order by phase, ord

-- Steward local shim, part 1 of 4: the cluster-wide roles Supabase creates.
-- For local and test clusters only. Run as the cluster superuser (here named supabase_admin, as on the platform).
-- Passwords below are for throwaway loopback clusters and nothing else.
\set ON_ERROR_STOP on

do $$
begin
  if not exists (select from pg_roles where rolname = 'anon') then
    create role anon nologin inherit;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin inherit;
  end if;
  if not exists (select from pg_roles where rolname = 'service_role') then
    create role service_role nologin inherit bypassrls;
  end if;
  if not exists (select from pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit password 'steward-local';
  end if;
  if not exists (select from pg_roles where rolname = 'supabase_auth_admin') then
    create role supabase_auth_admin login noinherit nocreaterole password 'steward-local';
  end if;
  if not exists (select from pg_roles where rolname = 'supabase_storage_admin') then
    create role supabase_storage_admin login noinherit createrole password 'steward-local';
  end if;
  -- What a libpq client logs in as on the platform: not superuser, BYPASSRLS, member of the API roles.
  if not exists (select from pg_roles where rolname = 'postgres') then
    create role postgres login nosuperuser createdb createrole replication bypassrls password 'steward-local';
  end if;
end
$$;

-- Roles created by an older shim are brought to today's attributes.
alter role supabase_auth_admin nocreaterole;

-- The role settings of the hosted platform today.
alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';
alter role authenticator set statement_timeout = '8s';
alter role authenticator set lock_timeout = '8s';
alter role supabase_auth_admin set search_path = auth;
alter role postgres set search_path = "$user", public, extensions;

grant anon, authenticated, service_role to authenticator;
grant authenticator to supabase_storage_admin;
grant anon, authenticated, service_role to postgres;
grant pg_read_all_data, pg_monitor, pg_signal_backend to postgres;

-- Since 2025 postgres is no longer a member of the Storage and Auth admin roles (it was in older shims):
-- it works on storage and auth objects only through the grants those schemas give it, as on the platform.
-- The one extra power the platform adds (policies on storage.objects, through supautils) comes from the stand-in
-- supautils_stand_in.c, which scripts/local-db.sh loads and turns on per database (STEWARD_PG_SUPAUTILS=off leaves it out).
do $$
begin
  if pg_has_role('postgres', 'supabase_storage_admin', 'member') then
    revoke supabase_storage_admin from postgres;
  end if;
  if pg_has_role('postgres', 'supabase_auth_admin', 'member') then
    revoke supabase_auth_admin from postgres;
  end if;
end
$$;

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
    create role supabase_auth_admin login noinherit createrole password 'steward-local';
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

alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';

grant anon, authenticated, service_role to authenticator;
grant authenticator to supabase_storage_admin;
grant anon, authenticated, service_role to postgres;

-- The one deviation plain PostgreSQL forces: on the platform, the supautils extension lets
-- postgres create policies on storage.objects and triggers on auth.users without owning them.
-- Plain PostgreSQL only lets the owner create policies, so locally postgres is a member of the
-- owner of the storage tables. See README, "How the local database differs".
grant supabase_storage_admin to postgres;

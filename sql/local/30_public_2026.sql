-- Steward local shim, part 4 of 4 (projects from 2026): new tables in public are NOT granted to the API roles;
-- migrations must grant explicitly, as the current quickstart does.
\set ON_ERROR_STOP on
grant usage on schema public to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on functions to anon, authenticated, service_role;

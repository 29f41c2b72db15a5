-- Steward local shim, part 4 of 4 (pre-2026 projects): new tables in public are granted to the API roles automatically.
\set ON_ERROR_STOP on
grant usage on schema public to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on functions to anon, authenticated, service_role;

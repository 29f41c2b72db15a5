-- What each migration file produced (owner: Migrations): the state, after the file, of every catalog group the file
-- changed (see CatalogSnapshot), written in the file's own transaction. `verify` compares the live catalog with the
-- latest state of each group; a file applied elsewhere (by hand, by the Supabase CLI, by an older Steward) gets its
-- state from a shadow database once.
create table steward.schema_record (
  seq bigserial primary key,
  version text not null,
  grp text not null,
  members jsonb not null
);
create index schema_record_version on steward.schema_record (version);
comment on table steward.schema_record is 'Per migration file: the catalog groups it changed, as they were right after it.';
-- How a history row's record was made: apply (in the file's transaction), shadow (rebuilt in a shadow database);
-- null: not recorded yet.
alter table steward.schema_migrations add column catalog_recorded text check (catalog_recorded in ('apply', 'shadow'));
-- A no-transaction file's catalog before its first try, kept until it is recorded: a retry after a statement
-- failed part-way starts from what the earlier try already changed, and the record must include that too.
create table steward.schema_record_pending (
  version text primary key,
  groups jsonb not null,
  taken_at timestamptz not null default now()
);
-- The lint rules a file allowed (`-- steward:allow <rule>`), as applied: reviewable beside the file's history row.
alter table steward.schema_migrations add column lint_allowed text[] not null default '{}';

-- Steward's own schema and its migration history (owner: Migrations).
create schema if not exists steward;
comment on schema steward is 'Steward bookkeeping: migration history and job runs. Managed by Steward itself.';
create table steward.bookkeeping_version (
  version integer primary key,
  applied_at timestamptz not null default now()
);
create table steward.schema_migrations (
  version text primary key,
  name text not null,
  checksum text not null,
  normalized_checksum text not null,
  applied_at timestamptz not null default now(),
  applied_by text not null default current_user,
  duration_ms double precision not null,
  steward_version text not null,
  method text not null default 'apply' check (method in ('apply', 'adopt'))
);

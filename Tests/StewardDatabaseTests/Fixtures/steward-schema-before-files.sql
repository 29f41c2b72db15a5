-- The steward schema exactly as Steward created it before its DDL moved to .sql files (versions 1 to 5),
-- kept frozen to prove databases created then upgrade to, and match, what the current files create.
-- Each version starts at a line '-- version N'.
-- version 1
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
-- version 2
create table steward.job_runs (
  id bigserial primary key,
  job text not null,
  scheduled_for timestamptz,
  started_at timestamptz,
  finished_at timestamptz,
  status text not null check (status in ('running', 'succeeded', 'failed', 'skipped', 'missed')),
  trigger text not null check (trigger in ('schedule', 'catch-up', 'retry', 'manual')),
  attempt integer not null default 1,
  dry_run boolean not null default false,
  summary jsonb,
  error text,
  host text not null,
  pid integer not null
);
comment on table steward.job_runs is 'Every scheduled slot and manual run of a Steward job: run, skipped or missed.';
create index job_runs_job_time on steward.job_runs (job, coalesce(scheduled_for, started_at) desc);
-- One row per slot and attempt, whichever instance records it (no duplicates across failovers).
create unique index job_runs_slot on steward.job_runs (job, scheduled_for, attempt) where scheduled_for is not null;
create table steward.job_state (
  job text primary key,
  paused boolean not null default false,
  changed_by text,
  changed_at timestamptz not null default now()
);
create table steward.leader (
  id integer primary key default 1 check (id = 1),
  host text not null,
  pid integer not null,
  since timestamptz not null default now()
);
-- version 3
create table steward.username_findings (
  profile_id uuid not null,
  username text not null,
  rule text not null,
  detail text not null,
  first_seen timestamptz not null default now(),
  last_seen timestamptz not null default now(),
  resolved_at timestamptz,
  primary key (profile_id, rule)
);
comment on table steward.username_findings is 'What the username-check job found; a finding that no longer holds is resolved, never deleted.';
create index username_findings_open on steward.username_findings (rule) where resolved_at is null;
-- version 4
create table steward.deleted_objects (
  run_id bigint not null,
  bucket_id text not null,
  name text not null,
  size bigint,
  owner text,
  object_created_at timestamptz,
  deleted_at timestamptz,
  primary key (run_id, bucket_id, name)
);
comment on table steward.deleted_objects is 'Every object the orphan-avatars job deleted through the Storage API. deleted_at is null while a deletion is in flight; the next run settles such rows.';
create index deleted_objects_pending on steward.deleted_objects (bucket_id, name) where deleted_at is null;
-- version 5
create table steward.apple_secrets (
  hmac text primary key,
  kid text not null,
  iat timestamptz not null,
  exp timestamptz not null,
  created_at timestamptz not null default now(),
  delivered text not null check (delivered in ('file', 'management-api', 'generated'))
);
comment on table steward.apple_secrets is 'Every Sign in with Apple client secret Steward generated or was given: never the secret, only hex(HMAC-SHA256(project ref, secret)).';
create table steward.alerts (
  id bigserial primary key,
  kind text not null,
  key text not null unique,
  level text not null check (level in ('info', 'warning', 'critical')),
  message text not null,
  created_at timestamptz not null default now(),
  webhook_status text
);
comment on table steward.alerts is 'Reminders and alerts Steward raised; the unique key makes each one fire once.';

-- Run history and pause state of Steward's jobs (owner: Jobs, RunHistory). Needs steward-schema.sql.
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

create table app.audit_log (
  id bigint generated always as identity,
  at timestamptz not null default now(),
  account_id uuid,
  action text
) partition by range (at);
create table app.audit_log_2026 partition of app.audit_log for values from ('2026-01-01') to ('2027-01-01');
alter table app.audit_log enable row level security;

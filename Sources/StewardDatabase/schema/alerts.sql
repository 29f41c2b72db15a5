-- Alerts Steward raised (owner: Alerts, AlertLog). Needs steward-schema.sql.
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

-- The instance that leads the scheduling (owner: Daemon, LeaderElection). Needs steward-schema.sql.
create table steward.leader (
  id integer primary key default 1 check (id = 1),
  host text not null,
  pid integer not null,
  since timestamptz not null default now()
);

-- What the security advisor found (steward advise, the security-advisor job); written by Advisor.AdvisorStore.
create table steward.advisor_findings (
  name text not null,
  object text not null,
  level text not null check (level in ('ERROR', 'WARN', 'INFO')),
  detail text not null,
  first_seen timestamptz not null default now(),
  last_seen timestamptz not null default now(),
  resolved_at timestamptz,
  primary key (name, object)
);
create index advisor_findings_open on steward.advisor_findings (name) where resolved_at is null;
comment on table steward.advisor_findings is 'What the security advisor found; a finding that no longer holds is resolved, never deleted; one that comes back is new again.';

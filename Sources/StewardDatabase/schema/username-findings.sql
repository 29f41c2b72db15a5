-- What the username-check job found (owner: UsernameCheck). Needs steward-schema.sql.
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

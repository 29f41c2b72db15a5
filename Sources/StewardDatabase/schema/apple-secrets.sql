-- Sign in with Apple client secrets, by hash (owner: AppleSecret). Needs steward-schema.sql.
create table steward.apple_secrets (
  hmac text primary key,
  kid text not null,
  iat timestamptz not null,
  exp timestamptz not null,
  created_at timestamptz not null default now(),
  delivered text not null check (delivered in ('file', 'management-api', 'generated'))
);
comment on table steward.apple_secrets is 'Every Sign in with Apple client secret Steward generated or was given: never the secret, only hex(HMAC-SHA256(project ref, secret)).';

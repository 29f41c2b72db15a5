-- Team accounts in their own schema.
create schema if not exists app;
grant usage on schema app to authenticated, service_role;

create table app.accounts (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  slug text unique,
  personal boolean not null default false,
  created_at timestamptz not null default now()
);

create table app.account_user (
  user_id uuid not null references auth.users on delete cascade,
  account_id uuid not null references app.accounts on delete cascade,
  account_role text not null,
  constraint account_user_pkey primary key (user_id, account_id),
  constraint account_user_role_check check (account_role in ('owner', 'member'))
);

alter default privileges for role postgres in schema app grant select on tables to authenticated;
create sequence app.invitation_numbers start 1000;
create table app.invitations (
  id uuid primary key default gen_random_uuid(),
  number bigint not null default nextval('app.invitation_numbers'),
  account_id uuid not null references app.accounts on delete cascade,
  token text not null default md5(random()::text),
  created_at timestamptz default now()
);
comment on table app.invitations is 'Pending invitations to join an account.';
alter table app.invitations enable row level security;
create policy "Owners manage invitations" on app.invitations for all to authenticated
  using (app.has_role_on_account(account_id, 'owner'));

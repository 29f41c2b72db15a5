alter table app.accounts enable row level security;
alter table app.account_user enable row level security;
grant select, insert, update, delete on all tables in schema app to authenticated;
create policy "Members can view their accounts" on app.accounts for select to authenticated
  using (app.has_role_on_account(id));
create policy "Owners can update their accounts" on app.accounts for update to authenticated
  using (app.has_role_on_account(id, 'owner'));
-- Reads its own table: users see their teammates.
create policy "Users see their teammates" on app.account_user for select to authenticated
  using (exists (select 1 from app.account_user au where au.account_id = account_user.account_id and au.user_id = auth.uid()));

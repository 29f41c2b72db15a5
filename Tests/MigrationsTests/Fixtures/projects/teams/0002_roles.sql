create function app.has_role_on_account(account_id uuid, account_role text default null) returns boolean
language sql security definer set search_path = '' as $$
  select exists (
    select 1 from app.account_user wu
    where wu.user_id = auth.uid()
      and wu.account_id = has_role_on_account.account_id
      and (wu.account_role = has_role_on_account.account_role or has_role_on_account.account_role is null)
  );
$$;
revoke execute on function app.has_role_on_account(uuid, text) from public;
grant execute on function app.has_role_on_account(uuid, text) to authenticated;

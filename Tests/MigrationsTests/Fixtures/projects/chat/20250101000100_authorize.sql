-- Parameters qualified with the function's own name, as plpgsql needs when a column has the same name.
create or replace function public.authorize(requested_permission public.app_permission, user_id uuid)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  bind_permissions int;
begin
  select count(*)
  from public.role_permissions
  inner join public.user_roles on role_permissions.role = user_roles.role
  where role_permissions.permission = authorize.requested_permission
    and user_roles.user_id = authorize.user_id
  into bind_permissions;
  return bind_permissions > 0;
end;
$$;
revoke execute on function public.authorize(public.app_permission, uuid) from public, anon;

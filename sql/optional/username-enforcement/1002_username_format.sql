-- Opt-in: new and changed usernames must be 3 to 30 lowercase ASCII letters, digits, _ and .,
-- not starting or ending with a dot and never two in a row. Existing usernames are left alone
-- (the username-check job reports them); the app gets a message it can show as it is.
create function public.enforce_username_format()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.username is not null
     and (new.username !~ '^[a-z0-9_.]{3,30}$' or new.username ~ '(^\.|\.$|\.\.)') then
    raise exception 'Usernames are 3 to 30 characters: lowercase letters, digits, _ and . (not at the start or end, never two dots in a row).'
      using errcode = '23514',
            detail = format('rejected username: %s', new.username),
            constraint = 'username_format';
  end if;
  return new;
end;
$$;

create trigger enforce_username_format
  before insert or update of username on public.profiles
  for each row execute function public.enforce_username_format();

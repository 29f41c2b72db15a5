alter table app.accounts add column updated_at timestamptz;

create function app.set_timestamps() returns trigger language plpgsql set search_path = '' as $$
begin
  if tg_op = 'INSERT' then new.created_at := now(); end if;
  new.updated_at := now();
  return new;
end;
$$;
create trigger accounts_timestamps before insert or update on app.accounts
  for each row execute function app.set_timestamps();

create function app.protect_personal() returns trigger language plpgsql set search_path = '' as $$
begin
  if old.personal <> new.personal then raise exception 'personal cannot change'; end if;
  return new;
end;
$$;
create trigger protect_personal before update on app.accounts
  for each row execute function app.protect_personal();

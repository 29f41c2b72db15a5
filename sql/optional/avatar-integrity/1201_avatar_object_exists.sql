-- Opt-in: a profile may only point at an avatar that exists in the avatars bucket. The app uploads first and
-- saves the profile second; if the object is gone by then (deleted by its owner, or by orphan-avatars with a
-- short grace), the save fails with a message the app can show, instead of leaving a broken image behind.
-- Together with the orphan-avatars fence (the job locks profiles against writes while it deletes), no profile
-- can end up pointing at an object that orphan-avatars deleted. Enable with
-- [migrations] include = sql/optional/avatar-integrity.
-- External URLs (a sign-in provider's picture) and other buckets are left alone, as the job does.
create function public.avatar_object_exists()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  reference text := btrim(new.avatar_url);
  object_name text;
begin
  if reference is null or reference = ''
     or (tg_op = 'UPDATE' and new.avatar_url is not distinct from old.avatar_url) then
    return new;
  end if;
  if reference ~ '^https?://' then
    if position('/storage/v1/object/' in reference) = 0 then
      return new;
    end if;
    object_name := regexp_replace(split_part(split_part(reference, '?', 1), '#', 1),
                                  '^.*/storage/v1/object/(public/|authenticated/|sign/)?', '');
    if object_name not like 'avatars/%' or position('%' in object_name) > 0 then
      return new;
    end if;
    object_name := substr(object_name, length('avatars/') + 1);
  else
    object_name := ltrim(reference, '/');
  end if;
  if not exists (select 1 from storage.objects o where o.bucket_id = 'avatars' and o.name = object_name) then
    raise exception 'The avatar was not found in storage; upload it again.'
      using errcode = '23503',
            detail = format('avatars/%s does not exist', object_name),
            constraint = 'avatar_object_exists';
  end if;
  return new;
end;
$$;

create trigger avatar_object_exists
  before insert or update of avatar_url on public.profiles
  for each row execute function public.avatar_object_exists();

-- Opt-in: usernames unique after NFKC normalisation and lower-casing (Bob, bob and ｂｏｂ become one name).
-- Enable with [migrations] include = sql/optional/username-enforcement.
-- The index cannot be built while such collisions exist: this file names the profiles that block it
-- (steward job run username-check lists them too, rule case_duplicate) instead of failing with a bare
-- unique violation. Rename one profile of each pair, then run steward migrate again.
do $$
declare
  blocking text;
  groups integer;
begin
  select count(*), string_agg(format('%s: %s', normal, members), '; ')
    into groups, blocking
  from (
    select lower(normalize(username, NFKC)) as normal,
           string_agg(format('%s (%s)', username, id), ', ' order by id) as members
    from public.profiles
    where username is not null
    group by 1
    having count(*) > 1
    order by 1
    limit 50
  ) collisions;
  if groups > 0 then
    raise exception 'cannot make usernames unique ignoring case: % group(s) of profiles share a name after normalisation', groups
      using errcode = '23505',
            detail = blocking,
            hint = 'rename one profile of each group (steward job run username-check lists them as case_duplicate), then migrate again';
  end if;
end
$$;

create unique index profiles_username_normalized_key
  on public.profiles (lower(normalize(username, NFKC)));

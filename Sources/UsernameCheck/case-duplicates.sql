-- The profiles whose usernames are the same after case folding and NFKC (rule case_duplicate), each with up to five
-- others of its group, from the keys the scan saw more than once (steward_username_repeats, not skeleton).
with c as (select distinct key as folded from steward_username_repeats where not skeleton),
p as (select k.profile_id, k.username, k.folded from steward_username_keys k join c using (folded)),
g as (select folded from p group by folded having count(*) > 1),
m as materialized (select p.* from p join g using (folded)),
l as (select folded, array_agg(profile_id order by profile_id) as ids,
             array_agg(format('%s (%s)', username, profile_id) order by profile_id) as shown
      from (select m.*, row_number() over (partition by folded order by profile_id) as r from m) t
      where r <= 6 group by folded)
insert into steward_username_found
select m.profile_id, m.username, 'case_duplicate', 'same after case folding and NFKC as ' ||
       (select string_agg(x.shown, ', ' order by x.i)
        from (select u.shown, u.i from unnest(l.ids, l.shown) with ordinality u(id, shown, i)
              where u.id <> m.profile_id order by u.i limit 5) x)
from m join l using (folded)

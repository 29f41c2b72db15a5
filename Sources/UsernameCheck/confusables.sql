-- The profiles whose usernames look alike (the same confusable skeleton, another normal form: rule confusable), each
-- with up to five others of its group, from the skeletons the scan saw more than once.
with c as (select distinct key as skeleton from steward_username_repeats where skeleton),
p as (select k.profile_id, k.username, k.folded, k.skeleton from steward_username_keys k join c using (skeleton)),
g as (select skeleton from (select distinct skeleton, folded from p) d group by skeleton having count(*) > 1),
m as materialized (select p.* from p join g using (skeleton)),
l as (select skeleton, array_agg(folded order by profile_id) as folds,
             array_agg(format('%s (%s)', username, profile_id) order by profile_id) as shown
      from (select f.*, row_number() over (partition by skeleton order by profile_id) as r
            from (select m.*, row_number() over (partition by skeleton, folded order by profile_id) as rf from m) f
            where rf <= 5) t
      where r <= 10 group by skeleton)
insert into steward_username_found
select m.profile_id, m.username, 'confusable', 'looks like ' ||
       (select string_agg(x.shown, ', ' order by x.i)
        from (select u.shown, u.i from unnest(l.folds, l.shown) with ordinality u(folded, shown, i)
              where u.folded <> m.folded order by u.i limit 5) x)
from m join l using (skeleton)

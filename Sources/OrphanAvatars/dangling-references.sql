-- References to objects that do not exist: how many, and up to five examples. A reference is dangling when none of
-- the names it may name exists (only values understood for certain: none in steward.orphan_loose). Grouping every
-- name by its value spills at a million rows. With one bucket ($1 false), a value read in SQL (`common`) is dangling
-- when its primary name is missing and, if it has a query, the name with its query is missing too: one anti-join of
-- the primary names, then a look at the few values left; values read by the function (and every value when there are
-- several buckets, $1 true) are grouped by value, each common one with both its names.
with primaries as materialized (
  select r.col, r.ref, r.bucket, r.name, r.query from steward.orphan_refs r
  where not $1 and r.common
    and not exists (select 1 from storage.objects o where o.bucket_id = r.bucket and o.name = r.name collate "C")
    and not exists (select 1 from steward.orphan_loose l where l.col = r.col and l.ref = r.ref)),
dangling as (
  select p.bucket || '/' || p.name as name from primaries p
  where p.query is null
     or not exists (select 1 from storage.objects o where o.bucket_id = p.bucket and o.name = (p.name || '?' || p.query) collate "default")
  union all
  select min(r.bucket || '/' || r.name) as name
  from steward.orphan_refs r
  cross join lateral (values (r.name), (r.name || '?' || r.query)) n(name)
  left join storage.objects o on o.bucket_id = r.bucket and o.name = n.name collate "C"
  where r.name is not null and n.name is not null
    and not exists (select 1 from steward.orphan_loose l where l.col = r.col and l.ref = r.ref)
    and (r.common is null or $1)
  group by r.col, r.ref
  having count(o.id) = 0)
select count(*), coalesce(string_agg(name, ', ') filter (where rn <= 5), '')
from (select name, row_number() over () as rn from dangling) d

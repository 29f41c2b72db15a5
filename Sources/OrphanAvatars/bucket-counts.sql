-- Each bucket of $1, in that order: its objects, those with no owner (`OrphanAvatarsJob.unowned`, filled in below),
-- its candidates with their bytes, its unreferenced objects, the name rows the scan read for it, those kept by a
-- mention, and whether storage.objects has a valid unique index on (bucket_id, name) (a name row names at most one
-- object).
with named as (select r.bucket, count(*) as names from steward.orphan_refs r where r.name is not null group by r.bucket)
select b.bucket, o.objects, o.unowned, k.candidates, k.bytes, k.unreferenced, coalesce(n.names, 0), k.mentioned,
       exists (select 1 from pg_index i
               where i.indrelid = 'storage.objects'::regclass and i.indisunique and i.indisvalid
                 and i.indpred is null and i.indexprs is null and i.indnkeyatts = 2
                 and (select array_agg(a.attname::text order by a.attname)
                      from pg_attribute a where a.attrelid = i.indrelid and a.attnum = any (i.indkey[0:1]))
                     = array['bucket_id', 'name']) as one_object_a_name
from unnest($1::text[]) with ordinality b(bucket, i)
cross join lateral (select count(*) as objects, count(*) filter (where {{unowned}}) as unowned
                    from storage.objects o where o.bucket_id = b.bucket) o
cross join lateral (select count(*) filter (where k.eligible) as candidates,
                           coalesce(sum(k.size) filter (where k.eligible), 0)::int8 as bytes, count(*) as unreferenced,
                           count(*) filter (where k.mentioned) as mentioned
                    from steward.orphan_candidates k where k.bucket = b.bucket) k
left join named n on n.bucket = b.bucket
order by b.i

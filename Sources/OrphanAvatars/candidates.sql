-- The objects of the scanned buckets ($1) that no name read by the scan names: the one anti-join. `create table … as`
-- reads in parallel workers (an insert through a `with` would not). `eligible`: the object may go, before the mention
-- rule has its say: older than the grace ($2 seconds), outside the kept prefixes ($3, `like` patterns), with a name of
-- at most $4 characters (the longest deletable name), and not a folder the dashboard made (`.emptyFolderPlaceholder`:
-- no profile names it, and the folder would vanish with it). Cheapest tests first. The object's id, version and
-- updated_at are kept: right before its request, the row must still be this one (`unchanged-objects.sql`).
create unlogged table steward.orphan_candidates with (autovacuum_enabled = false) as
select o.bucket_id as bucket, o.name collate "C" as name, coalesce((o.metadata ->> 'size')::bigint, 0) as size,
       o.owner::text as owner, extract(epoch from o.created_at)::float8 as created_at,
       o.id as object_id, o.version, (extract(epoch from o.updated_at) * 1000000)::int8 as updated_micros,
       coalesce(coalesce(o.updated_at, o.created_at, now()) < now() - make_interval(secs => $2::float8)
         and not (o.name like any ($3::text[]))
         and length(o.name) <= $4
         and split_part(o.name, '/', -1) <> '.emptyFolderPlaceholder', false) as eligible,
       false as mentioned
from storage.objects o
where o.bucket_id = any($1::text[])
  and not exists (select 1 from steward.orphan_refs r where r.bucket = o.bucket_id and r.name = o.name collate "C")

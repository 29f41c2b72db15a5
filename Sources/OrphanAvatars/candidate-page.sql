-- Up to $4 candidates of bucket $1 after the name $2, in name order, that storage.objects still holds past the grace
-- ($3 seconds): an object deleted or overwritten since the scan is left out.
select k.name, k.size, k.owner, k.created_at, k.object_id::text, k.version, k.updated_micros from steward.orphan_candidates k
where k.bucket = $1 and k.eligible and k.name > $2 collate "C"
  and exists (select 1 from storage.objects o
              where o.bucket_id = k.bucket and o.name = k.name collate "default" and o.id = k.object_id
                and coalesce(o.updated_at, o.created_at, now()) < now() - make_interval(secs => $3::float8))
order by k.name limit $4

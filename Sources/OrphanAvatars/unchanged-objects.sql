-- The names of a batch whose object is, right now, the one the candidate was read from: bucket $1; per name ($2) the
-- object's id ($3), version ($4, '' for none) and updated_at in microseconds since the epoch ($5, '' for none); and
-- still outside the grace ($6 seconds). A name whose row is gone, has another id or version (a re-upload, an upsert),
-- was written since, or is inside the grace is not returned: it is left out of the request.
select x.n from unnest($2::text[], $3::uuid[], $4::text[], $5::text[]) as x(n, i, v, u)
where exists (select 1 from storage.objects o
              where o.bucket_id = $1 and o.name = x.n collate "default" and o.id = x.i
                and coalesce(o.version, '') = x.v
                and coalesce((extract(epoch from o.updated_at) * 1000000)::int8::text, '') = x.u
                and greatest(coalesce(o.updated_at, now()), coalesce(o.created_at, now())) < now() - make_interval(secs => $6::float8))

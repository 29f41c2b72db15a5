-- Rows (group, key, definition) of Storage's buckets: every column but the timestamps and the owner, so a bucket
-- row a file inserts is part of what that file produced (and a later `update storage.buckets` is drift).
select 'bucket ' || b.id, j.key, coalesce(j.value, 'null')
from storage.buckets b, jsonb_each_text(to_jsonb(b) - 'created_at' - 'updated_at' - 'owner' - 'owner_id' - 'id') j
